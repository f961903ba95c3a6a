package gate

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// gateCookie returns the wr_gate Set-Cookie of resp, or nil.
func gateCookie(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == CookieName {
			return c
		}
	}
	return nil
}

// TestEnterRetryAfterTimeout: the first redeem is applied at waitingroom
// but answered after the gate's Timeout. The buyer sees the retry page,
// which sets the cookie; the resend carries it, asks for the same session
// id, and goes on to next with the session the first redeem opened. The
// same pass from another browser is refused.
func TestEnterRetryAfterTimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		// before runs first in the buyer's browser.
		before func(e *env)
		// ended is the number of end calls the resend makes (the session
		// that a new pass replaces).
		ended int
	}{
		{name: "a browser without a cookie", ended: 0},
		{name: "a browser with a live session of an earlier pass", before: func(e *env) { e.mustEnter() }, ended: 1}, // replaced
		{name: "a browser with a forged cookie", before: func(e *env) { e.cookie(testRoom + "." + randID() + "." + strings.Repeat("A", macLen)) }, ended: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, shortTimeout)
			if tc.before != nil {
				tc.before(e)
			}
			before := e.room.liveSessions()
			endsBefore := e.room.count("end")
			p := e.pass(nil)
			e.room.set(func(f *fakeRoom) { f.lagging, f.lag = 1, time.Second })

			first := e.enter(p, "/checkout")
			body := readBody(t, first)
			if first.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "Please retry") {
				t.Fatalf("the timed-out enter: %d %q, want the retry page", first.StatusCode, body)
			}
			if !strings.Contains(body, `name="pass"`) {
				t.Fatalf("the retry page does not repost the pass: %q", body)
			}
			var seed *http.Cookie
			for _, c := range first.Cookies() {
				if c.Name == RetryCookieName {
					seed = c
				}
			}
			if seed == nil || seed.Value == "" || seed.MaxAge <= 0 || seed.Path != EnterPath {
				t.Fatalf("the retry page set no retry cookie: %v", first.Header["Set-Cookie"])
			}
			opened := e.room.liveSessions()
			if len(opened) != len(before)+1 {
				t.Fatalf("the first redeem was not applied at waitingroom: %d sessions, had %d", len(opened), len(before))
			}

			resend := e.enter(p, "/checkout")
			if resend.StatusCode != http.StatusSeeOther || resend.Header.Get("Location") != "/checkout" {
				t.Fatalf("the resend: %d %s, want 303 /checkout", resend.StatusCode, resend.Header.Get("Location"))
			}
			got := gateCookie(resend)
			if got == nil {
				t.Fatal("the resend set no cookie")
			}
			id, ok := e.gate.sessionID(&http.Request{Header: http.Header{"Cookie": {got.String()}}})
			if !ok || !slices.Contains(opened, id) || slices.Contains(before, id) {
				t.Fatalf("the resend's session %q is not the one the first redeem opened (%v)", id, opened)
			}
			if live := e.room.liveSessions(); len(live) != 1 || live[0] != id {
				t.Fatalf("live sessions %v, want only %q", live, id)
			}
			if n := e.room.count("end") - endsBefore; n != tc.ended {
				t.Errorf("%d end calls, want %d", n, tc.ended)
			}
			if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusOK {
				t.Errorf("with the session the shop answered %d", resp.StatusCode)
			}

			// A copy of the pass, from another cookie jar.
			thief := *e.browser
			thief.Jar, _ = cookiejar.New(nil)
			resp, err := thief.PostForm(e.shop.URL+EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}})
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusConflict || gateCookie(resp) != nil {
				t.Errorf("the copy: %d %v, want 409 and no cookie", resp.StatusCode, resp.Header["Set-Cookie"])
			}
			if live := e.room.liveSessions(); len(live) != 1 || live[0] != id {
				t.Errorf("after the copy: live sessions %v, want only %q", live, id)
			}
		})
	}
}

// TestEnterResendWithoutTimeout: a double submit whose first answer
// arrived (the browser holds the session) still goes on to next.
func TestEnterResendWithoutTimeout(t *testing.T) {
	e := newEnv(t, nil)
	p := e.pass(nil)
	for i := range 2 {
		if resp := e.enter(p, "/checkout"); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/checkout" {
			t.Fatalf("submit %d: %d %s", i, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if n := len(e.room.liveSessions()); n != 1 {
		t.Errorf("%d live sessions, want 1", n)
	}
}

// TestEnterWithAnOldWaitingroom: a waitingroom without the redeem's
// session field (it refuses the body) is asked again without it.
func TestEnterWithAnOldWaitingroom(t *testing.T) {
	e := newEnv(t, nil)
	e.room.set(func(f *fakeRoom) { f.oldAPI = true })
	e.mustEnter()
	if got := e.room.count("redeem"); got != 2 {
		t.Errorf("%d redeem calls, want 2 (with the session id, then without)", got)
	}
	if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("with the session the shop answered %d", resp.StatusCode)
	}
}

// TestPlantedCookieFixesNoSession: an attacker enters with a pass of their
// own (a valid wr_gate cookie C), plants C in the victim's browser, then
// resends a copy of the victim's pass with C. Found in review: the session
// id followed from C and the pass, so the resend rode the victim's
// session. Now only a retry cookie made for that very pass carries a seed.
func TestPlantedCookieFixesNoSession(t *testing.T) {
	e := newEnv(t, nil)
	e.mustEnter() // the attacker's own session
	u := mustURL(t, e.shop.URL)
	var planted *http.Cookie
	for _, c := range e.browser.Jar.Cookies(u) {
		if c.Name == CookieName {
			planted = c
		}
	}
	if planted == nil {
		t.Fatal("the attacker has no cookie")
	}
	victim := *e.browser
	victim.Jar, _ = cookiejar.New(nil)
	victim.Jar.SetCookies(u, []*http.Cookie{{Name: CookieName, Value: planted.Value, Path: "/"}})
	p := e.pass(nil)
	vr, err := victim.PostForm(e.shop.URL+EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}})
	if err != nil {
		t.Fatal(err)
	}
	vr.Body.Close()
	if vr.StatusCode != http.StatusSeeOther || gateCookie(vr) == nil {
		t.Fatalf("the victim's enter: %d", vr.StatusCode)
	}
	ar := e.enter(p, "/checkout") // the attacker's jar still holds C
	if ar.StatusCode != http.StatusConflict || gateCookie(ar) != nil {
		t.Fatalf("the attacker's resend of the copied pass: %d, cookie %v; want 409 and none", ar.StatusCode, gateCookie(ar))
	}
}
