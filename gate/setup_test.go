package gate

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestSetupErrorsLogged: a room whose audience is not Options.Audience (as
// both are normalised), a room without a targetURL and a missing room are
// each logged as an error naming what to fix, when the settings are
// fetched: at once when the problem is new, then at most once a minute.
func TestSetupErrorsLogged(t *testing.T) {
	cases := []struct {
		name  string
		aud   string // Options.Audience, when not the shop's URL
		room  func(e *env, f *fakeRoom)
		words []string // nil: nothing logged at ERROR
	}{
		{"same audience", "", func(e *env, f *fakeRoom) { f.aud = e.shop.URL }, nil},
		{"same after normalisation", "HTTPS://Shop.Example:443", func(e *env, f *fakeRoom) { f.aud = "https://shop.EXAMPLE" }, nil},
		{"another audience", "", func(e *env, f *fakeRoom) { f.aud = "https://Shop.Example:443" },
			[]string{"level=ERROR", "audience", "roomAudience=https://shop.example", "audience=" + "http://127.0.0.1"}},
		{"gate off", "", func(e *env, f *fakeRoom) { f.refuse = map[string]int{"gate": http.StatusNotFound} },
			[]string{"level=ERROR", "no targetURL"}},
		{"no such room", "", func(e *env, f *fakeRoom) { f.noRoom = true }, []string{"level=ERROR", "does not exist", "Options.Room"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, func(o *Options) {
				if c.aud != "" {
					o.Audience = c.aud
				}
			})
			e.room.set(func(f *fakeRoom) { c.room(e, f) })
			// The first request fetches the settings in the background.
			e.do(http.MethodGet, "/checkout", nil)
			waitFor(t, "the settings fetch", func() bool { return e.room.count("gate") == 1 && !e.gate.health.probingNow() })
			logs := e.logs.String()
			if c.words == nil {
				if strings.Contains(logs, "level=ERROR") {
					t.Fatalf("an error logged for a fitting room: %s", logs)
				}
				return
			}
			for _, w := range c.words {
				if !strings.Contains(logs, w) {
					t.Errorf("the log lacks %q: %s", w, logs)
				}
			}
			errors := func() int { return strings.Count(e.logs.String(), "level=ERROR") }
			if n := errors(); n != 1 {
				t.Fatalf("%d errors logged, want 1: %s", n, logs)
			}
			// The same problem again within a minute: not logged again.
			e.clock.Add(30 * time.Second)
			e.gate.fetchConfig(context.Background())
			if n := errors(); n != 1 {
				t.Errorf("%d errors after a refetch within a minute, want 1", n)
			}
			// A minute on: logged again.
			e.clock.Add(31 * time.Second)
			e.gate.fetchConfig(context.Background())
			if n := errors(); n != 2 {
				t.Errorf("%d errors after a minute, want 2", n)
			}
			// Another problem: logged at once.
			e.room.set(func(f *fakeRoom) { f.refuse, f.noRoom, f.aud = nil, false, "https://elsewhere.example" })
			e.gate.fetchConfig(context.Background())
			if n := errors(); n != 3 || !strings.Contains(e.logs.String(), "roomAudience=https://elsewhere.example") {
				t.Errorf("%d errors after the problem changed, want 3: %s", n, e.logs.String())
			}
		})
	}
}

// TestStalePassPage: a pass waitingroom no longer knows (replaced by a
// newer pass of the same buyer) gets the neutral page in the buyer's
// language, or pass_invalid as JSON, with the way back to the room.
func TestStalePassPage(t *testing.T) {
	cases := []struct{ name, lang, accept, words string }{
		{"en", "en", "text/html", "Go back to the waiting room: if it is still your turn"},
		{"ko", "ko", "text/html", "더 이상 사용할 수 없습니다"},
		{"json", "en", "application/json", `"error":"pass_invalid"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			p := e.pass(func(p *passOpts) { p.jti = replacedJTI })
			resp := e.do(http.MethodPost, EnterPath, url.Values{"pass": {p}, "next": {"/"}}, "Accept-Language", c.lang, "Accept", c.accept)
			body := readBody(t, resp)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, c.words) ||
				!strings.Contains(body, e.room.srv.URL+"/r/"+testRoom) || strings.Contains(body, "did not come from") {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
		})
	}
}
