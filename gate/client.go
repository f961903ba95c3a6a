package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// maxAnswer bounds the body of any answer read from waitingroom.
const maxAnswer = 64 << 10

var (
	// errUnavailable: no usable answer from waitingroom (unreachable,
	// timeout, 5xx, a malformed answer, or a refused API key).
	errUnavailable = errors.New("waitingroom unavailable")
	errPassUsed    = errors.New("pass already used")
	errPassInvalid = errors.New("pass invalid")
	errPassExpired = errors.New("pass expired")
	errSessionGone = errors.New("session gone")
)

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

// call makes one bounded request to waitingroom. op names the operation in
// errors; errors never carry the URL (it may hold a session id). A
// transport error, a timeout or a 5xx is errUnavailable and marks
// waitingroom down; any other answer marks it up. The call is bounded by
// Options.Timeout alone: a buyer who leaves mid-request does not cut it
// short (which would look like an outage).
func (g *Gate) call(ctx context.Context, op, method, path string, body any, auth bool) (answer, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.opts.Timeout)
	defer cancel()
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
	resp, err := g.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		g.health.down(g.now())
		return answer{}, fmt.Errorf("gate: %s: %w: %v", op, errUnavailable, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		g.health.down(g.now())
		return answer{}, fmt.Errorf("gate: %s: %w: read: %v", op, errUnavailable, err)
	}
	if resp.StatusCode >= 500 {
		g.health.down(g.now())
		return answer{}, fmt.Errorf("gate: %s: %w: status %d", op, errUnavailable, resp.StatusCode)
	}
	g.health.up()
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

// misconfigured reports an answer that means the gate is set up wrong (a
// refused API key, an unknown room) as errUnavailable, logged at most once
// a minute. Waitingroom counts as down: the gate cannot work with it.
func (g *Gate) misconfigured(op string, a answer) error {
	g.health.down(g.now())
	if g.health.misconfig.allow(g.now()) {
		g.log.Error("gate: waitingroom refused the gate's call; check RoomURL, Room and APIKey", "op", op, "status", a.status, "code", a.code)
	}
	return fmt.Errorf("gate: %s: %w: status %d %s", op, errUnavailable, a.status, a.code)
}

// decodeSession parses the {"session":{…}} answer of redeem and renew.
func (g *Gate) decodeSession(op string, a answer) (session, error) {
	var out struct {
		Session session `json:"session"`
	}
	if err := json.Unmarshal(a.body, &out); err != nil || out.Session.ID == "" {
		return session{}, fmt.Errorf("gate: %s: %w: malformed session answer", op, errUnavailable)
	}
	return out.Session, nil
}

// redeem turns a verified pass into a session, once.
func (g *Gate) redeem(ctx context.Context, pass string) (session, error) {
	a, err := g.call(ctx, "redeem", http.MethodPost, "/api/rooms/"+url.PathEscape(g.opts.Room)+"/passes/redeem",
		map[string]string{"pass": pass}, true)
	if err != nil {
		return session{}, err
	}
	switch {
	case a.status == http.StatusOK:
		return g.decodeSession("redeem", a)
	case a.status == http.StatusConflict:
		return session{}, fmt.Errorf("gate: redeem: %w", errPassUsed)
	case a.status == http.StatusUnauthorized && a.code == "pass_invalid":
		return session{}, fmt.Errorf("gate: redeem: %w", errPassInvalid)
	}
	return session{}, g.misconfigured("redeem", a)
}

// renew reports whether a session is live and renews it (in idle mode).
func (g *Gate) renew(ctx context.Context, id string) (session, error) {
	a, err := g.call(ctx, "renew", http.MethodPost, g.sessionPath(id, "renew"), nil, true)
	if err != nil {
		return session{}, err
	}
	switch {
	case a.status == http.StatusOK:
		return g.decodeSession("renew", a)
	case a.status == http.StatusNotFound && (a.code == "session_gone" || a.code == "room_not_found"):
		return session{}, fmt.Errorf("gate: renew: %w", errSessionGone)
	}
	return session{}, g.misconfigured("renew", a)
}

// end ends a session at waitingroom; a gone session is not an error.
func (g *Gate) end(ctx context.Context, id string) error {
	a, err := g.call(ctx, "end", http.MethodPost, g.sessionPath(id, "end"), nil, true)
	if err != nil {
		return err
	}
	if a.status < 300 || a.status == http.StatusNotFound {
		return nil
	}
	return g.misconfigured("end", a)
}
