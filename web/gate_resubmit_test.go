package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/server/queue"
	"waitingroom/web/gatemode"
	"waitingroom/web/response"
)

// TestGateEnterResubmit: a second submit of a used pass by the browser it
// let in goes on to next; by any other browser it is refused. A new pass
// of the room replaces the browser's session and ends the old one: one
// browser holds one slot.
func TestGateEnterResubmit(t *testing.T) {
	g := newGateHarness(t, nil)
	ctx := context.Background()
	enter := func(p string, c *http.Cookie) reply {
		return g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}}, nil, c)
	}
	p := g.newPass(t)
	r := enter(p, nil)
	c := gateCookieOf(r)
	if r.status != 303 || c == nil {
		t.Fatalf("first submit: %d %.300s", r.status, r.body)
	}
	for _, tc := range []struct {
		name   string
		cookie *http.Cookie
		status int
	}{
		{"again, with the session it opened", c, 303},
		{"again, without a cookie", nil, 409},
		{"again, with a made-up session", &http.Cookie{Name: GateCookie, Value: g.room + "." + strings.Repeat("D", 22)}, 409},
	} {
		r := enter(p, tc.cookie)
		if r.status != tc.status || (tc.status == 303 && (r.header.Get("Location") != "/checkout" || gateCookieOf(r) != nil)) {
			t.Fatalf("%s: %d to %q, cookie %v", tc.name, r.status, r.header.Get("Location"), gateCookieOf(r))
		}
	}

	_, oldID, _ := strings.Cut(c.Value, ".")
	r = enter(g.newPass(t), c)
	c2 := gateCookieOf(r)
	if r.status != 303 || c2 == nil || c2.Value == c.Value {
		t.Fatalf("a new pass: %d, cookie %v", r.status, c2)
	}
	if _, err := g.eng.TouchSession(ctx, g.room, oldID, false); !errors.Is(err, queue.ErrSessionGone) {
		t.Fatalf("the replaced session still lives: %v", err)
	}
	if n, err := g.eng.ActiveSessions(ctx, g.room); err != nil || n != 1 {
		t.Fatalf("active sessions: %d %v", n, err)
	}
	// The first pass again, now that its session ended: refused.
	if r := enter(p, c); r.status != 409 {
		t.Fatalf("the first pass with its ended session: %d", r.status)
	}
}

// lostReply redeems for real, then answers the first redeem with an
// error, as a Redis reply lost after the script ran would.
type lostReply struct {
	*queue.Engine
	lost atomic.Bool
}

func (l *lostReply) Redeem(ctx context.Context, roomName, jti, sessionID string) (queue.Session, error) {
	s, err := l.Engine.Redeem(ctx, roomName, jti, sessionID)
	if err == nil && l.lost.CompareAndSwap(false, true) {
		return queue.Session{}, errors.New("i/o timeout after the script ran")
	}
	return s, err
}

// TestGateEnterResendAfterALostReply: the first redeem of a pass opened a
// session but its answer was lost, so the buyer saw "please retry". The
// retry page's cookie makes the resend land in that same session (one
// slot), while the pass copied into another browser is still refused.
func TestGateEnterResendAfterALostReply(t *testing.T) {
	var gates *lostReply
	g := newGateHarness(t, func(o *Options) {
		gates = &lostReply{Engine: o.Queue.(*queue.Engine)}
		o.Gates = gates
	})
	ctx := context.Background()
	p := g.newPass(t)
	enter := func(c *http.Cookie) reply {
		return g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}}, nil, c)
	}
	first := enter(nil)
	seed := cookieOf(first, gatemode.RetryCookie)
	if first.status != http.StatusServiceUnavailable || seed == nil || seed.Path != gatemode.EnterPath || gateCookieOf(first) != nil ||
		!strings.Contains(first.body, `name="pass"`) {
		t.Fatalf("first try: %d, retry cookie %v: %.300s", first.status, seed, first.body)
	}
	if r := enter(nil); r.status != http.StatusConflict {
		t.Fatalf("the pass from another browser: %d, want 409", r.status)
	}
	again := enter(seed)
	c := gateCookieOf(again)
	if again.status != http.StatusSeeOther || c == nil || again.header.Get("Location") != "/checkout" {
		t.Fatalf("the resend: %d to %q, cookie %v", again.status, again.header.Get("Location"), c)
	}
	if gone := cookieOf(again, gatemode.RetryCookie); gone == nil || gone.MaxAge >= 0 {
		t.Fatalf("the retry cookie is not cleared: %v", gone)
	}
	_, id, _ := strings.Cut(c.Value, ".")
	if _, err := g.eng.TouchSession(ctx, g.room, id, false); err != nil {
		t.Fatalf("the resend's session: %v", err)
	}
	if n, err := g.eng.ActiveSessions(ctx, g.room); err != nil || n != 1 {
		t.Fatalf("active sessions: %d %v, want 1", n, err)
	}
}

// TestGateEnterSeedCannotBePlanted: an attacker who plants a cookie in the
// victim's browser before the hand-off (from a sibling subdomain, say) and
// holds a copy of the pass cannot ride the victim's session: the session
// id does not follow from any cookie the attacker can make (found in
// review: it was a hash of the wr_gate value and the pass).
func TestGateEnterSeedCannotBePlanted(t *testing.T) {
	g := newGateHarness(t, nil)
	seed := strings.Repeat("A", 22)
	for _, tc := range []struct {
		name   string
		cookie *http.Cookie
	}{
		{"a planted session cookie", &http.Cookie{Name: GateCookie, Value: g.room + "." + seed}},
		{"a planted retry cookie", &http.Cookie{Name: gatemode.RetryCookie, Value: seed + "." + strings.Repeat("B", 43)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := g.newPass(t)
			c, err := g.keys.Verify(p, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			victim := g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}}, nil, tc.cookie)
			if victim.status != http.StatusSeeOther {
				t.Fatalf("the victim: %d", victim.status)
			}
			_, id, _ := strings.Cut(gateCookieOf(victim).Value, ".")
			if id == g.web.signer.MAC("gate session", g.room+"\x00"+seed+"\x00"+c.ID)[:22] {
				t.Fatal("the session id follows from the planted seed")
			}
			// The attacker resends the copied pass with the planted cookie.
			if r := g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}}, nil, tc.cookie); r.status != http.StatusConflict {
				t.Fatalf("the attacker's resend: %d, want 409", r.status)
			}
		})
	}
}

// TestGateBusyPassIsRetried: while another attempt holds the pass (a
// stalled first try), a redeem is told to try again (503 pass_busy), not
// that the pass was used: that attempt may fail and leave it usable.
func TestGateBusyPassIsRetried(t *testing.T) {
	g := newGateHarness(t, nil)
	ctx := context.Background()
	c, tok := g.readyVisitor(t)
	p := passOf(t, g.handoff(t, c, tok))
	v, ok := g.web.signer.Verify(c.Value)
	if !ok {
		t.Fatal("the visitor cookie does not verify")
	}
	if _, err := g.eng.Claim(ctx, g.room, v, tok, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	r := g.do(t, "POST", "/api/rooms/"+g.room+"/passes/redeem", `{"pass":"`+p+`"}`, g.keyed(g.apiKey), nil)
	var e response.Error
	r.json(t, &e)
	if r.status != http.StatusServiceUnavailable || e.Code != "pass_busy" || r.header.Get("Retry-After") == "" {
		t.Fatalf("redeem of a busy pass: %d %s", r.status, r.body)
	}
	enter := g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}}, nil, nil)
	if enter.status != http.StatusServiceUnavailable || cookieOf(enter, gatemode.RetryCookie) == nil {
		t.Fatalf("enter with a busy pass: %d, retry cookie %v", enter.status, cookieOf(enter, gatemode.RetryCookie))
	}
}
