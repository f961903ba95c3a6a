package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"waitingroom/server/queue"
)

// TestGateEnterResubmit: a second submit of a used pass by the browser it
// let in goes on to next; by any other browser it is refused. A new pass
// of the room replaces the browser's session and ends the old one: one
// browser holds one slot.
func TestGateEnterResubmit(t *testing.T) {
	g := newGateHarness(t, nil)
	ctx := context.Background()
	enter := func(p string, c *http.Cookie) reply {
		return g.form(t, enterPath, url.Values{"pass": {p}, "next": {"/checkout"}}, nil, c)
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
