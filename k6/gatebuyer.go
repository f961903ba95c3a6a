package k6

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

// GateBuyer is one buyer of a gate-mode room going where a browser goes:
// enter the line (the JSON API), wait for the ready event (SSE), take the
// hand-off (POST /r/{room}/pass), post its form to the shop, open the page
// it leads to, and after a hold say "done" to the shop.
type GateBuyer struct {
	// RoomURL is waitingroom's base URL (http).
	RoomURL string
	Room    string
	// Client has the buyer's own cookie jar and follows no redirects
	// (NewGateClient).
	Client *http.Client
	// Local is the source address of the buyer's SSE stream (nil: any).
	Local *net.TCPAddr
	// Silence is how long the stream may stay without an event before the
	// buyer asks the position API (0: DefaultSilence).
	Silence time.Duration
}

// NewGateClient returns a client for one buyer: its own cookie jar, no
// redirects followed, over rt (shared by many buyers).
func NewGateClient(rt http.RoundTripper) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Transport: rt, Jar: jar, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// HandOff is the form of the hand-off page: where it posts the pass.
type HandOff struct {
	Action, Pass, Next string
	// ReferrerPolicy is the page's Referrer-Policy header.
	ReferrerPolicy string
}

// GateTrip is what one buyer went through.
type GateTrip struct {
	Ticket int64
	// PassExpiresAt is the ready event's passExpiresAt (unix ms, Redis'
	// clock): the admission time plus the room's token TTL.
	PassExpiresAt int64
	HandOff       HandOff
	// Session is the session id of the wr_gate cookie the shop's host set.
	Session string
	// Ready is when the ready event arrived, CheckedOut when the shop's
	// page answered.
	Ready, CheckedOut time.Time
	// Retries counts the requests sent again after a "please retry"
	// (503) answer, by step.
	Retries Retries
	// Polled is true when the buyer's stream never brought the ready
	// event and the position API told of the admission (Ready.Polled).
	Polled bool
}

// Retries counts, by step, the requests a buyer sent again after a
// "please retry" (503): the room's POST /r/{room}/pass, the hand-off to the
// shop, the checkout page and the done request.
type Retries struct {
	Pass, HandOff, Checkout, Done int
}

// Add adds o's counts to r.
func (r *Retries) Add(o Retries) {
	r.Pass += o.Pass
	r.HandOff += o.HandOff
	r.Checkout += o.Checkout
	r.Done += o.Done
}

// maxRetries is how often a buyer sends a request again after a guard's
// "please retry" (503) answer, a second apart.
const maxRetries = 3

// retrying calls send until it answers other than 503 (a guard's "please
// retry" page: waitingroom was slow or away; its button sends the same
// again, as the buyer would), at most maxRetries more times, counting them
// in *retries.
func retrying(ctx context.Context, retries *int, send func() (int, error)) error {
	for tries := 0; ; tries++ {
		status, err := send()
		if err != nil || status != http.StatusServiceUnavailable || tries == maxRetries {
			return err
		}
		*retries++
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// Run takes the buyer from the line to the shop's page and, after hold,
// to POST {shop}/checkout/done. It returns what it got as far as it got.
func (b GateBuyer) Run(ctx context.Context, hold time.Duration) (GateTrip, error) {
	var trip GateTrip
	var err error
	if trip.Ticket, err = b.Enter(ctx); err != nil {
		return trip, err
	}
	ready, err := b.WaitReady(ctx)
	if err != nil {
		return trip, err
	}
	trip.Ready, trip.PassExpiresAt, trip.Polled = time.Now(), ready.PassExpiresAt, ready.Polled
	err = retrying(ctx, &trip.Retries.Pass, func() (status int, err error) {
		trip.HandOff, status, err = b.takePass(ctx, ready.Token)
		if status == http.StatusServiceUnavailable && trip.Retries.Pass < maxRetries {
			return status, nil // the room's "please retry": post the token again
		}
		return status, err
	})
	if err != nil {
		return trip, err
	}
	var res HandOffResult
	err = retrying(ctx, &trip.Retries.HandOff, func() (status int, err error) {
		res, err = PostHandOff(ctx, b.Client, trip.HandOff, b.RoomURL)
		return res.Status, err
	})
	if err != nil {
		return trip, err
	}
	trip.Session = res.Session
	if res.Status != http.StatusSeeOther || res.Session == "" {
		return trip, fmt.Errorf("gate buyer: hand-off answered %d (session %t): %s", res.Status, res.Session != "", res.Body)
	}
	page, err := url.Parse(trip.HandOff.Action)
	if err != nil {
		return trip, fmt.Errorf("gate buyer: hand-off action: %w", err)
	}
	next, err := page.Parse(res.Location)
	if err != nil {
		return trip, fmt.Errorf("gate buyer: hand-off Location: %w", err)
	}
	var status int
	var body string
	err = retrying(ctx, &trip.Retries.Checkout, func() (int, error) {
		status, body, err = b.do(ctx, http.MethodGet, next.String(), nil, nil)
		return status, err
	})
	if err != nil {
		return trip, err
	}
	if status != http.StatusOK {
		return trip, fmt.Errorf("gate buyer: %s answered %d: %s", next.Path, status, shorten([]byte(body)))
	}
	trip.CheckedOut = time.Now()
	select {
	case <-ctx.Done():
		return trip, ctx.Err()
	case <-time.After(hold):
	}
	done := next.ResolveReference(&url.URL{Path: "/checkout/done"})
	err = retrying(ctx, &trip.Retries.Done, func() (int, error) {
		status, body, err = b.do(ctx, http.MethodPost, done.String(), nil, nil)
		return status, err
	})
	if err != nil {
		return trip, err
	}
	if status != http.StatusNoContent {
		return trip, fmt.Errorf("gate buyer: done answered %d: %s", status, shorten([]byte(body)))
	}
	return trip, nil
}

// Enter joins the line through the JSON API, solving the room's
// challenge when it asks for one, and returns the ticket.
func (b GateBuyer) Enter(ctx context.Context) (int64, error) {
	j, err := EnterRoom(ctx, b.Client, b.RoomURL, b.Room, nil)
	if err != nil {
		return 0, fmt.Errorf("gate buyer: %w", err)
	}
	if j.Status != http.StatusOK {
		return 0, fmt.Errorf("gate buyer: enter: %s", j.Refusal())
	}
	return j.Ticket, nil
}

// Ready is a buyer's admission: the entry token and its expiry.
type Ready struct {
	Token string
	// PassExpiresAt is the position's passExpiresAt (unix ms, Redis'
	// clock): the admission time plus the room's token TTL.
	PassExpiresAt int64
	// Polled is true when the stream stayed silent and the position API
	// gave the admission instead of a ready event.
	Polled bool
}

// DefaultSilence is how long a buyer's stream may stay without an event
// before the buyer asks the position API, as a safety net; a waiting
// buyer's stream carries an event every tick.
const DefaultSilence = 10 * time.Second

// WaitReady follows the buyer's stream until the ready event. Should the
// stream stay silent for Silence, it asks the position API (then
// again after each further silence) and reports an admission found there
// as Polled.
func (b GateBuyer) WaitReady(ctx context.Context) (Ready, error) {
	rs, err := newRawStream(b.RoomURL, b.Room, b.Local)
	if err != nil {
		return Ready{}, err
	}
	u, _ := url.Parse(b.RoomURL)
	for _, c := range b.Client.Jar.Cookies(u) {
		if c.Name == "wr_vid" {
			rs.cookie = c.Name + "=" + c.Value
		}
	}
	silence := b.Silence
	if silence <= 0 {
		silence = DefaultSilence
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		mu        sync.Mutex
		ready     Ready
		streamErr error
		lastEvent = time.Now()
	)
	go func() {
		t := time.NewTicker(min(time.Second, silence/2))
		defer t.Stop()
		for {
			select {
			case <-sctx.Done():
				return
			case <-t.C:
			}
			mu.Lock()
			silent := time.Since(lastEvent) > silence
			if silent {
				lastEvent = time.Now()
			}
			mu.Unlock()
			if !silent {
				continue
			}
			if p, err := b.position(sctx); err == nil && p.Token != "" {
				mu.Lock()
				if ready.Token == "" {
					ready, ready.Polled = p, true
				}
				mu.Unlock()
				stop()
				return
			}
		}
	}()
	rs.run(sctx, func(first bool, _ time.Duration, err error) {
		if err != nil {
			mu.Lock()
			streamErr = err
			mu.Unlock()
		}
	}, func(_ int64, name, data []byte) {
		mu.Lock()
		defer mu.Unlock()
		lastEvent = time.Now()
		if string(name) != "ready" || ready.Token != "" {
			return
		}
		var p struct {
			EntryToken    string `json:"entryToken"`
			PassExpiresAt int64  `json:"passExpiresAt"`
		}
		streamErr = json.Unmarshal(data, &p)
		ready = Ready{Token: p.EntryToken, PassExpiresAt: p.PassExpiresAt}
		stop()
	})
	stop()
	mu.Lock()
	defer mu.Unlock()
	switch {
	case ready.Token != "":
		return ready, nil
	case streamErr != nil:
		return Ready{}, fmt.Errorf("gate buyer: stream: %w", streamErr)
	}
	return Ready{}, fmt.Errorf("gate buyer: no ready event: %w", ctx.Err())
}

// position asks the position API; Token is "" while the buyer waits.
func (b GateBuyer) position(ctx context.Context) (Ready, error) {
	status, body, err := b.do(ctx, http.MethodGet, b.api()+"/queue/position", nil, nil)
	if err != nil {
		return Ready{}, err
	}
	if status != http.StatusOK {
		return Ready{}, fmt.Errorf("gate buyer: position: %d %s", status, shorten([]byte(body)))
	}
	var p struct {
		Status        string  `json:"status"`
		EntryToken    *string `json:"entryToken"`
		PassExpiresAt int64   `json:"passExpiresAt"`
	}
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		return Ready{}, fmt.Errorf("gate buyer: position: %w", err)
	}
	if p.Status != "READY" || p.EntryToken == nil {
		return Ready{}, nil
	}
	return Ready{Token: *p.EntryToken, PassExpiresAt: p.PassExpiresAt}, nil
}

// TakePass posts the entry token to /r/{room}/pass, as the READY page's
// "Continue" button does, and reads the hand-off form it answers.
func (b GateBuyer) TakePass(ctx context.Context, token string) (HandOff, error) {
	h, _, err := b.takePass(ctx, token)
	return h, err
}

// takePass is TakePass, with the answer's status.
func (b GateBuyer) takePass(ctx context.Context, token string) (HandOff, int, error) {
	form := url.Values{"entry_token": {token}}
	hdr := map[string]string{"Origin": origin(b.RoomURL), "Sec-Fetch-Site": "same-origin"}
	req, err := newRequest(ctx, http.MethodPost, strings.TrimRight(b.RoomURL, "/")+"/r/"+url.PathEscape(b.Room)+"/pass", form, hdr)
	if err != nil {
		return HandOff{}, 0, err
	}
	resp, err := b.Client.Do(req)
	if err != nil {
		return HandOff{}, 0, fmt.Errorf("gate buyer: pass: %w", err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return HandOff{}, resp.StatusCode, fmt.Errorf("gate buyer: pass: %d %s", resp.StatusCode, shorten(page))
	}
	h, err := ParseHandOff(string(page), resp.Request.URL)
	h.ReferrerPolicy = resp.Header.Get("Referrer-Policy")
	return h, resp.StatusCode, err
}

// HandOffResult is what the shop's host answered a posted pass.
type HandOffResult struct {
	Status   int
	Location string
	// Session is the session id of the wr_gate cookie it set ("" none).
	Session string
	Body    string
}

// PostHandOff posts h's form with client, from a page of roomURL (the
// Origin a browser sends), and reports the answer. A client with another
// cookie jar posting the same form is a replay.
func PostHandOff(ctx context.Context, client *http.Client, h HandOff, roomURL string) (HandOffResult, error) {
	form := url.Values{"pass": {h.Pass}, "next": {h.Next}}
	hdr := map[string]string{"Origin": origin(roomURL), "Sec-Fetch-Site": "same-site"}
	req, err := newRequest(ctx, http.MethodPost, h.Action, form, hdr)
	if err != nil {
		return HandOffResult{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return HandOffResult{}, fmt.Errorf("gate buyer: hand-off: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	res := HandOffResult{Status: resp.StatusCode, Location: resp.Header.Get("Location"), Body: shorten(body)}
	for _, c := range resp.Cookies() {
		if c.Name == GateCookie && c.Value != "" && c.MaxAge >= 0 {
			_, res.Session, _ = strings.Cut(c.Value, ".")
		}
	}
	return res, nil
}

var (
	formTag  = regexp.MustCompile(`(?is)<form\b[^>]*>.*?</form>`)
	startTag = regexp.MustCompile(`(?is)<(form|input)\b[^>]*>`)
	attr     = regexp.MustCompile(`(?s)([a-zA-Z][a-zA-Z0-9_-]*)\s*=\s*("([^"]*)"|'([^']*)'|([^\s"'>]+))`)
)

// ParseHandOff reads the hand-off page's form: the one with a "pass"
// field. A relative action is resolved against base.
func ParseHandOff(page string, base *url.URL) (HandOff, error) {
	for _, f := range formTag.FindAllString(page, -1) {
		var h HandOff
		found := false
		for _, tag := range startTag.FindAllStringSubmatch(f, -1) {
			a := attrs(tag[0])
			switch strings.ToLower(tag[1]) {
			case "form":
				h.Action = a["action"]
			case "input":
				switch a["name"] {
				case "pass":
					h.Pass, found = a["value"], true
				case "next":
					h.Next = a["value"]
				}
			}
		}
		if !found {
			continue
		}
		if h.Pass == "" || h.Action == "" {
			return HandOff{}, errors.New("gate buyer: the hand-off form has no pass or no action")
		}
		act, err := base.Parse(h.Action)
		if err != nil {
			return HandOff{}, fmt.Errorf("gate buyer: hand-off action %q: %w", h.Action, err)
		}
		h.Action = act.String()
		return h, nil
	}
	return HandOff{}, fmt.Errorf("gate buyer: no hand-off form in %s", shorten([]byte(page)))
}

func attrs(tag string) map[string]string {
	out := map[string]string{}
	for _, m := range attr.FindAllStringSubmatch(tag, -1) {
		out[strings.ToLower(m[1])] = html.UnescapeString(m[3] + m[4] + m[5])
	}
	return out
}

func (b GateBuyer) api() string {
	return strings.TrimRight(b.RoomURL, "/") + "/api/rooms/" + url.PathEscape(b.Room)
}

// do sends a request with the buyer's client and returns the status and
// the body (its first 64 KiB).
func (b GateBuyer) do(ctx context.Context, method, u string, form url.Values, hdr map[string]string) (int, string, error) {
	req, err := newRequest(ctx, method, u, form, hdr)
	if err != nil {
		return 0, "", err
	}
	resp, err := b.Client.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("gate buyer: %s %s: %w", method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(body), nil
}

func newRequest(ctx context.Context, method, u string, form url.Values, hdr map[string]string) (*http.Request, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("gate buyer: %w", err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return req, nil
}

// origin returns scheme://host[:port] of u.
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Scheme + "://" + p.Host
}

func shorten(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
