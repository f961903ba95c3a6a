package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// maxAnswer bounds the body of any answer read from waitingroom.
const maxAnswer = 64 << 10

var (
	// errUnavailable: no answer from waitingroom (unreachable, timeout,
	// 5xx). Only the health probe turns such failures into "down".
	errUnavailable = errors.New("waitingroom unavailable")
	// errRefused: waitingroom answered, but not as the gate expects (a
	// refused API key, an unknown room, the gate off, a throttle, a
	// malformed answer). The request fails closed; waitingroom is not down.
	errRefused = errors.New("waitingroom refused the call")
	// errBusy: maxCalls calls to waitingroom are in flight already.
	errBusy        = errors.New("too many calls to waitingroom in flight")
	errPassUsed    = errors.New("pass already used")
	errPassInvalid = errors.New("pass invalid")
	errPassExpired = errors.New("pass expired")
	// errPassStale: a pass that verified here (or names a key that the
	// JWKS no longer lists, even after a refetch) but can no longer be
	// used: waitingroom answers pass_invalid for a jti that a newer pass
	// of the same buyer replaced, or whose pass expired there.
	errPassStale   = errors.New("pass no longer usable")
	errSessionGone = errors.New("session gone")
)

// maxCalls bounds the calls to waitingroom in flight at once.
const maxCalls = 64

// slotMode says how a call takes one of the maxCalls slots.
type slotMode int

const (
	slotWait slotMode = iota // wait for a slot within the call's timeout, else errBusy
	slotTry                  // errBusy at once when every slot is taken
	slotNone                 // the health probe: takes no slot
)

// newClient is the default client: no redirects followed, and a transport
// that keeps maxCalls idle connections to waitingroom, with dial, TLS and
// response-header timeouts of timeout (each call is bounded by it too).
func newClient(timeout time.Duration) *http.Client {
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          2 * maxCalls,
		MaxIdleConnsPerHost:   maxCalls,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// session is the session JSON of redeem and renew.
type session struct {
	ID          string    `json:"id"`
	Room        string    `json:"room"`
	Subject     string    `json:"subject"`
	ExpiresAt   time.Time `json:"expiresAt"`
	Mode        string    `json:"mode"`
	IdleSeconds int       `json:"idleSeconds"`
}

// public is what the shop's handlers may see of s.
func (s session) public() Session {
	return Session{Room: s.Room, Subject: s.Subject, ExpiresAt: s.ExpiresAt, Mode: s.Mode}
}

// answer is a definitive (non-5xx) answer from waitingroom.
type answer struct {
	status int
	code   string // the error code of a JSON error body
	body   []byte
}

// call makes one bounded request to waitingroom, holding one of the
// maxCalls slots as mode says. op names the operation in errors; errors
// never carry the URL (it may hold a session id). A transport error, a
// timeout or a 5xx is errUnavailable and starts the health probe (unless
// this is the probe); it never marks waitingroom down by itself. The call
// is bounded by Options.Timeout alone: a buyer who leaves mid-request does
// not cut it short (which would look like an outage).
func (g *Gate) call(ctx context.Context, op, method, path string, body any, auth bool, mode slotMode) (answer, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.opts.Timeout)
	defer cancel()
	switch mode {
	case slotTry:
		select {
		case g.slots <- struct{}{}:
		default:
			return answer{}, fmt.Errorf("gate: %s: %w", op, errBusy)
		}
		defer func() { <-g.slots }()
	case slotWait:
		select {
		case g.slots <- struct{}{}:
		case <-ctx.Done():
			return answer{}, fmt.Errorf("gate: %s: %w", op, errBusy)
		}
		defer func() { <-g.slots }()
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return answer{}, fmt.Errorf("gate: %s: %w", op, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.base+path, rd)
	if err != nil {
		return answer{}, fmt.Errorf("gate: %s: %w", op, errors.New("bad request URL"))
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth {
		req.Header.Set("Authorization", "Bearer "+g.opts.APIKey)
	}
	unavailable := func(format string, args ...any) (answer, error) {
		if mode != slotNone {
			g.suspect()
		}
		return answer{}, fmt.Errorf("gate: %s: %w: "+format, append([]any{op, errUnavailable}, args...)...)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return unavailable("%v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return unavailable("read: %v", err)
	}
	if resp.StatusCode >= 500 {
		return unavailable("status %d", resp.StatusCode)
	}
	a := answer{status: resp.StatusCode, body: b}
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(b, &e)
		a.code = e.Error
	}
	return a, nil
}

// sessionPath is the API path of one of the room's sessions.
func (g *Gate) sessionPath(id, verb string) string {
	return "/api/rooms/" + url.PathEscape(g.opts.Room) + "/sessions/" + url.PathEscape(id) + "/" + verb
}

// refused reports an answer that the gate cannot use (a refused API key,
// an unknown room, the gate off, a throttle) as errRefused, logged at most
// once a minute. It is no sign that waitingroom is down: the request that
// made the call fails closed.
func (g *Gate) refused(op string, a answer) error {
	if g.health.misconfig.allow(g.now()) {
		g.log.Error("gate: waitingroom refused the gate's call; check RoomURL, Room and APIKey", "op", op, "status", a.status, "code", a.code)
	}
	return fmt.Errorf("gate: %s: %w: status %d %s", op, errRefused, a.status, a.code)
}

// decodeSession parses the {"session":{…}} answer of redeem and renew.
func (g *Gate) decodeSession(op string, a answer) (session, error) {
	var out struct {
		Session session `json:"session"`
	}
	if err := json.Unmarshal(a.body, &out); err != nil || out.Session.ID == "" {
		return session{}, g.refused(op+" (malformed answer)", a)
	}
	return out.Session, nil
}

// redeem turns a verified pass into the session sid, once: waitingroom
// answers a retry with the same sid (after a timeout hid the first answer)
// with the same session, and any other sid with 409. A waitingroom that
// predates the session field (it refuses the body, 400 bad_json) is asked
// again without it, and picks the id itself.
func (g *Gate) redeem(ctx context.Context, pass, sid string) (session, error) {
	path := "/api/rooms/" + url.PathEscape(g.opts.Room) + "/passes/redeem"
	a, err := g.call(ctx, "redeem", http.MethodPost, path, map[string]string{"pass": pass, "session": sid}, true, slotWait)
	if err == nil && a.status == http.StatusBadRequest && a.code == "bad_json" {
		a, err = g.call(ctx, "redeem", http.MethodPost, path, map[string]string{"pass": pass}, true, slotWait)
	}
	if err != nil {
		return session{}, err
	}
	switch {
	case a.status == http.StatusOK:
		return g.decodeSession("redeem", a)
	case a.status == http.StatusConflict:
		return session{}, fmt.Errorf("gate: redeem: %w", errPassUsed)
	case a.status == http.StatusUnauthorized && a.code == "pass_invalid":
		// The pass verified here (signature, room, audience), so
		// waitingroom does not know its jti: replaced by a newer pass.
		return session{}, fmt.Errorf("gate: redeem: %w", errPassStale)
	}
	return session{}, g.refused("redeem", a)
}

// renew reports whether a session is live and renews it (in idle mode).
// It takes a call slot only when one is free (else errBusy).
func (g *Gate) renew(ctx context.Context, id string) (session, error) {
	a, err := g.call(ctx, "renew", http.MethodPost, g.sessionPath(id, "renew"), nil, true, slotTry)
	if err != nil {
		return session{}, err
	}
	switch {
	case a.status == http.StatusOK:
		return g.decodeSession("renew", a)
	case a.status == http.StatusNotFound && (a.code == "session_gone" || a.code == "room_not_found"):
		return session{}, fmt.Errorf("gate: renew: %w", errSessionGone)
	}
	return session{}, g.refused("renew", a)
}

// end ends a session at waitingroom; a gone session is not an error.
func (g *Gate) end(ctx context.Context, id string) error {
	a, err := g.call(ctx, "end", http.MethodPost, g.sessionPath(id, "end"), nil, true, slotWait)
	if err != nil {
		return err
	}
	if a.status < 300 || a.status == http.StatusNotFound {
		return nil
	}
	return g.refused("end", a)
}
