package gate

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNoSessionGoesToRoom(t *testing.T) {
	e := newEnv(t, nil)
	roomPage := e.room.srv.URL + "/r/" + testRoom
	cases := []struct {
		method string
		hdr    []string
		status int
		body   string
	}{
		{http.MethodGet, nil, http.StatusSeeOther, ""},
		{http.MethodHead, nil, http.StatusSeeOther, ""},
		{http.MethodPost, nil, http.StatusForbidden, "Please wait for your turn"},
		{http.MethodPost, []string{"Accept-Language", "ko-KR,ko;q=0.9,en;q=0.5"}, http.StatusForbidden, "차례를 기다려 주세요"},
		{http.MethodPost, []string{"Accept", "application/json"}, http.StatusForbidden, `"error":"session_required"`},
		{http.MethodDelete, nil, http.StatusForbidden, roomPage},
	}
	for _, c := range cases {
		t.Run(c.method+strings.Join(c.hdr, ":"), func(t *testing.T) {
			resp := e.do(c.method, "/checkout", nil, c.hdr...)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			if c.status == http.StatusSeeOther && resp.Header.Get("Location") != roomPage {
				t.Errorf("Location %q, want %q", resp.Header.Get("Location"), roomPage)
			}
			if body := readBody(t, resp); !strings.Contains(body, c.body) {
				t.Errorf("body %q lacks %q", body, c.body)
			}
		})
	}
	if n := e.room.count("renew") + e.room.count("redeem"); n != 0 {
		t.Errorf("%d session calls for visitors without a session", n)
	}
}

func TestEnter(t *testing.T) {
	other := newKey(t, "k1") // another key under the room's kid: a forgery
	stranger := newKey(t, "k-unknown")
	cases := []struct {
		name     string
		pass     func(e *env) string
		status   int
		body     string
		redeemed int // redeem calls the fake must see
	}{
		{"valid", func(e *env) string { return e.pass(nil) }, http.StatusSeeOther, "", 1},
		{"forged with another key", func(e *env) string {
			now := e.clock.Now()
			return e.room.sign(other, passOpts{room: testRoom, aud: e.shop.URL, jti: "f1", iat: now, exp: now.Add(time.Minute)})
		}, http.StatusForbidden, "This pass is not valid", 0},
		{"unknown kid", func(e *env) string {
			now := e.clock.Now()
			return e.room.sign(stranger, passOpts{room: testRoom, aud: e.shop.URL, jti: "f2", iat: now, exp: now.Add(time.Minute)})
		}, http.StatusForbidden, "This pass can no longer be used", 0},
		{"replaced by a newer pass (waitingroom: pass_invalid)", func(e *env) string {
			return e.pass(func(p *passOpts) { p.jti = replacedJTI })
		}, http.StatusForbidden, "This pass can no longer be used", 1},
		{"wrong audience", func(e *env) string {
			return e.pass(func(p *passOpts) { p.aud = "https://evil.example" })
		}, http.StatusForbidden, "This pass is not valid", 0},
		{"wrong room", func(e *env) string { return e.pass(func(p *passOpts) { p.room = "other-room" }) }, http.StatusForbidden, "not valid", 0},
		{"expired", func(e *env) string {
			return e.pass(func(p *passOpts) { p.exp = e.clock.Now().Add(-time.Minute) })
		}, http.StatusForbidden, "This pass has expired", 0},
		{"issued in the future", func(e *env) string {
			return e.pass(func(p *passOpts) { p.iat = e.clock.Now().Add(time.Minute) })
		}, http.StatusForbidden, "not valid", 0},
		{"no jti", func(e *env) string { return e.pass(func(p *passOpts) { p.jti = "" }) }, http.StatusForbidden, "not valid", 0},
		{"alg none", func(e *env) string {
			parts := strings.Split(e.pass(nil), ".")
			return "eyJhbGciOiJub25lIiwia2lkIjoiazEifQ." + parts[1] + "."
		}, http.StatusForbidden, "not valid", 0},
		{"garbage", func(e *env) string { return "not-a-pass" }, http.StatusForbidden, "not valid", 0},
		{"empty", func(e *env) string { return "" }, http.StatusForbidden, "not valid", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			resp := e.enter(c.pass(e), "/checkout?item=1")
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, readBody(t, resp))
			}
			body := readBody(t, resp)
			if !strings.Contains(body, c.body) {
				t.Errorf("body %q lacks %q", body, c.body)
			}
			if got := e.room.count("redeem"); got != c.redeemed {
				t.Errorf("%d redeem calls, want %d", got, c.redeemed)
			}
			next := e.do(http.MethodGet, "/checkout?item=1", nil)
			if c.status != http.StatusSeeOther {
				if !strings.Contains(body, e.room.srv.URL+"/r/"+testRoom) {
					t.Errorf("refusal page has no link to the room: %s", body)
				}
				if next.StatusCode != http.StatusSeeOther {
					t.Errorf("after a refused pass the shop answered %d", next.StatusCode)
				}
				return
			}
			if loc := resp.Header.Get("Location"); loc != "/checkout?item=1" {
				t.Errorf("Location %q", loc)
			}
			ck := resp.Header.Get("Set-Cookie")
			for _, want := range []string{CookieName + "=" + testRoom + ".", "HttpOnly", "SameSite=Lax", "Path=/"} {
				if !strings.Contains(ck, want) {
					t.Errorf("Set-Cookie %q lacks %q", ck, want)
				}
			}
			if strings.Contains(ck, "Max-Age") || strings.Contains(ck, "Secure") {
				t.Errorf("Set-Cookie %q: no Max-Age, no Secure on http", ck)
			}
			if next.StatusCode != http.StatusOK || readBody(t, next) != "shop GET /checkout" {
				t.Errorf("with the session the shop answered %d", next.StatusCode)
			}
			if got := e.room.count("renew"); got != 0 {
				t.Errorf("%d renew calls right after the redeem, want 0", got)
			}
		})
	}
}

func TestPassUsedTwice(t *testing.T) {
	e := newEnv(t, nil)
	p := e.pass(nil)
	if resp := e.enter(p, "/checkout"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("first use: %d", resp.StatusCode)
	}
	for _, lang := range []struct{ header, text string }{
		{"en", "This pass was already used"},
		{"ko", "이미 사용된 입장권입니다"},
	} {
		other := newEnv(t, nil) // another browser with the same pass
		other.room, other.shop, other.gate = e.room, e.shop, e.gate
		resp := other.do(http.MethodPost, EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}}, "Accept-Language", lang.header)
		body := readBody(t, resp)
		if resp.StatusCode != http.StatusConflict || !strings.Contains(body, lang.text) {
			t.Errorf("%s: second use answered %d %q", lang.header, resp.StatusCode, body)
		}
		if !strings.Contains(body, `href="`+e.room.srv.URL+"/r/"+testRoom+`"`) {
			t.Errorf("%s: no link back to the room: %s", lang.header, body)
		}
		if resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("a refused pass set a cookie")
		}
	}
	if got := e.room.count("redeem"); got != 3 {
		t.Errorf("%d redeem calls, want 3", got)
	}
}

func TestSafeNext(t *testing.T) {
	cases := map[string]string{
		"":                              "/",
		"/":                             "/",
		"/checkout?a=1&b=2":             "/checkout?a=1&b=2",
		"/a/b#frag":                     "/a/b#frag",
		"//evil.example":                "/",
		"//evil.example/path":           "/",
		`/\evil.example`:                "/",
		`\\evil.example`:                "/",
		"https://evil.example/":         "/",
		"javascript:alert(1)":           "/",
		"evil.example":                  "/",
		"/\t/evil.example":              "/",
		"/\n/evil.example":              "/",
		"/%2F%2Fevil.example":           "/%2F%2Fevil.example",
		`/./\evil.example`:              "/",
		`/.\/evil.example`:              "/",
		`/a/..\/..\/\evil.example`:      "/",
		`/a/../\evil.example`:           "/",
		"/./evil.example":               "/evil.example",
		"/a/..//evil.example":           "/evil.example",
		"/a/../../b?x=/../y":            "/b?x=/../y",
		"/a/b/":                         "/a/b/",
		"/a/./b/../c#f":                 "/a/c#f",
		"/.":                            "/",
		"/x\u0000":                      "/",
		"/x\u00a0y":                     "/x\u00a0y",
		"/" + strings.Repeat("a", 3000): "/",
	}
	for in, want := range cases {
		if got := LocalPath(in); got != want {
			t.Errorf("LocalPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEnterRedirectsOnlyOnSite(t *testing.T) {
	for _, next := range []string{"//evil.example/x", "https://evil.example", `/\evil.example`,
		`/./\evil.example`, `/.\/evil.example`, `/a/..\/..\/\evil.example`, `/a/../\evil.example`} {
		e := newEnv(t, nil)
		resp := e.enter(e.pass(nil), next)
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
			t.Errorf("next %q: %d to %q, want 303 to /", next, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

func TestEnterBounds(t *testing.T) {
	e := newEnv(t, nil)
	if resp := e.do(http.MethodGet, EnterPath, nil); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET enter: %d", resp.StatusCode)
	}
	big := url.Values{"pass": {strings.Repeat("a", 20<<10)}, "next": {"/"}}
	if resp := e.do(http.MethodPost, EnterPath, big); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("20 KiB enter: %d", resp.StatusCode)
	}
	if got := e.room.count("redeem") + e.room.count("jwks"); got != 0 {
		t.Errorf("%d calls for refused requests", got)
	}
}

func TestRenewThrottle(t *testing.T) {
	cases := []struct {
		every    time.Duration
		step     time.Duration
		requests int
	}{
		{10 * time.Second, time.Second, 50},
		{10 * time.Second, 300 * time.Millisecond, 200},
		{time.Second, 250 * time.Millisecond, 40},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("every %s step %s", c.every, c.step), func(t *testing.T) {
			e := newEnv(t, func(o *Options) { o.RenewEvery = c.every })
			e.mustEnter()
			for i := 0; i < c.requests; i++ {
				if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusOK {
					t.Fatalf("request %d: %d", i, resp.StatusCode)
				}
				e.clock.Add(c.step)
			}
			span := time.Duration(c.requests) * c.step
			limit := int(math.Ceil(float64(span) / float64(c.every)))
			got := e.room.count("renew")
			if got > limit || got < limit-1 {
				t.Errorf("%d renew calls for %d requests over %s, want %d or %d", got, c.requests, span, limit-1, limit)
			}
		})
	}
}

func TestRenewConcurrent(t *testing.T) {
	e := newEnv(t, nil)
	e.mustEnter()
	e.clock.Add(11 * time.Second)
	var wg sync.WaitGroup
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, e.shop.URL+"/checkout", nil)
			resp, err := e.browser.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status %d", resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	if got := e.room.count("renew"); got != 1 {
		t.Errorf("%d renew calls for 30 concurrent requests, want 1", got)
	}
}

func TestSessionGone(t *testing.T) {
	cases := []struct {
		method string
		status int
	}{
		{http.MethodGet, http.StatusSeeOther},
		{http.MethodPost, http.StatusForbidden},
	}
	for _, c := range cases {
		t.Run(c.method, func(t *testing.T) {
			e := newEnv(t, nil)
			e.mustEnter()
			e.room.set(func(f *fakeRoom) { f.sessions = map[string]string{} }) // the session went idle at waitingroom
			if resp := e.do(c.method, "/checkout", nil); resp.StatusCode != http.StatusOK {
				t.Fatalf("inside RenewEvery the cached session serves: %d", resp.StatusCode)
			}
			e.clock.Add(11 * time.Second)
			resp := e.do(c.method, "/checkout", nil)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			if c.status == http.StatusSeeOther && resp.Header.Get("Location") != e.room.srv.URL+"/r/"+testRoom {
				t.Errorf("Location %q", resp.Header.Get("Location"))
			}
			if ck := resp.Header.Get("Set-Cookie"); !strings.Contains(ck, CookieName+"=;") || !strings.Contains(ck, "Max-Age=0") {
				t.Errorf("cookie not cleared: %q", ck)
			}
			if got := e.room.count("renew"); got != 1 {
				t.Errorf("%d renew calls, want 1", got)
			}
		})
	}
}

func TestEnd(t *testing.T) {
	e := newEnv(t, nil)
	e.mustEnter()
	cookie := e.browser.Jar.Cookies(mustURL(t, e.shop.URL))
	if len(e.room.liveSessions()) != 1 {
		t.Fatal("no session at the fake")
	}
	resp := e.do(http.MethodPost, "/done", nil)
	if resp.StatusCode != http.StatusOK || e.room.count("end") != 1 {
		t.Fatalf("done: %d, %d end calls", resp.StatusCode, e.room.count("end"))
	}
	if n := len(e.room.liveSessions()); n != 0 {
		t.Errorf("%d sessions left at the fake", n)
	}
	if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after End the shop answered %d", resp.StatusCode)
	}
	// The old cookie, replayed, is refused too.
	e.browser.Jar.SetCookies(mustURL(t, e.shop.URL), cookie)
	e.clock.Add(11 * time.Second)
	if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("the ended session's cookie answered %d", resp.StatusCode)
	}
	if resp := e.do(http.MethodPost, "/done", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("End without a session: %d", resp.StatusCode)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestWaitingroomDown(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name       string
		opt        *bool
		roomOpen   bool
		learn      bool   // let the gate fetch the room's settings before the outage
		down       string // "503", "held" (no answer until the test ends) or "closed"
		wantStatus int
	}{
		{"FailOpen true, 503", &yes, false, false, "503", http.StatusOK},
		{"FailOpen true, timeout", &yes, false, false, "held", http.StatusOK},
		{"FailOpen true, unreachable", &yes, false, false, "closed", http.StatusOK},
		{"FailOpen false, 503", &no, true, true, "503", http.StatusServiceUnavailable},
		{"FailOpen false, unreachable", &no, true, true, "closed", http.StatusServiceUnavailable},
		{"room's failOpen true, cached", nil, true, true, "503", http.StatusOK},
		{"room's failOpen false, cached", nil, false, true, "503", http.StatusServiceUnavailable},
		{"room's failOpen never learned", nil, true, false, "closed", http.StatusServiceUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, func(o *Options) {
				if c.down == "held" {
					shortTimeout(o)
				}
				o.FailOpen = c.opt
			})
			e.room.set(func(f *fakeRoom) { f.failOpen = c.roomOpen })
			if !c.learn {
				// The room's settings cannot be read (gate_off, say): the
				// probe gets answers but learns no failOpen.
				e.room.set(func(f *fakeRoom) { f.refuse = map[string]int{"gate": 404} })
			}
			switch c.down {
			case "held":
				// The outage's calls are the only ones, each answered by
				// the Timeout (300 ms): a session the gate has not renewed
				// yet, and settings fetched just now, so that the renew is
				// the first call.
				e.cookie(e.gate.cookieValue(randID()))
				e.gate.health.mu.Lock()
				e.gate.health.lastProbe = e.clock.Now()
				e.gate.health.mu.Unlock()
			default:
				e.mustEnter()
			}
			if c.learn {
				if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusOK {
					t.Fatalf("before the outage: %d", resp.StatusCode)
				}
				waitFor(t, "the gate settings fetch", func() bool {
					e.gate.cfg.mu.Lock()
					defer e.gate.cfg.mu.Unlock()
					return e.gate.cfg.known
				})
			}
			// A probe still under way would take the outage's probe's
			// place and find waitingroom up.
			e.waitProbed()
			switch c.down {
			case "closed":
				e.room.srv.Close()
			case "held":
				// Answered only when the test ends: the request's answer
				// comes from the gate's Timeout.
				defer e.room.hold("renew")()
				defer e.room.hold("gate")()
			default:
				e.room.set(func(f *fakeRoom) { f.down = c.down })
			}
			e.clock.Add(11 * time.Second)
			first := e.do(http.MethodGet, "/checkout", nil, "Accept-Language", "en")
			// One failed call fails closed; it starts the probe, which
			// alone finds waitingroom down.
			if first.StatusCode != http.StatusServiceUnavailable || first.Header.Get("X-Waitingroom-Fail") != "" {
				t.Errorf("the first failed renew: %d %v, want 503 (closed until the probe confirms)", first.StatusCode, first.Header)
			}
			e.waitDown(true)
			if got := e.gate.health.failCount(); got < probeFails {
				t.Errorf("down after %d failed probes, want %d", got, probeFails)
			}
			resp := e.do(http.MethodGet, "/checkout", nil, "Accept-Language", "en")
			body := readBody(t, resp)
			if resp.StatusCode != c.wantStatus {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.wantStatus, body)
			}
			if c.wantStatus == http.StatusServiceUnavailable {
				if resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "Please retry") ||
					!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
					t.Errorf("retry page: %v %q", resp.Header, body)
				}
				ko := e.do(http.MethodGet, "/checkout", nil, "Accept-Language", "ko")
				if b := readBody(t, ko); ko.StatusCode != http.StatusServiceUnavailable || !strings.Contains(b, "잠시 후 다시 시도해 주세요") {
					t.Errorf("Korean retry page: %d %q", ko.StatusCode, b)
				}
			}
			// A visitor without a session, once waitingroom is known down,
			// gets the same mode instead of a dead room.
			stranger := newEnv(t, nil)
			stranger.shop, stranger.gate = e.shop, e.gate
			if resp := stranger.do(http.MethodGet, "/checkout", nil); resp.StatusCode != c.wantStatus {
				t.Errorf("no session while down: %d, want %d", resp.StatusCode, c.wantStatus)
			}
			if !strings.Contains(e.logs.String(), "waitingroom unavailable") {
				t.Errorf("no warning logged: %s", e.logs.String())
			}
		})
	}
}

func TestEnterWhileDown(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name   string
		opt    *bool
		status int
	}{
		{"fail open: on to next without a session", &yes, http.StatusSeeOther},
		{"fail closed: retry form", &no, http.StatusServiceUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, func(o *Options) { o.FailOpen = c.opt })
			p := e.pass(nil)
			e.room.set(func(f *fakeRoom) { f.down = "503" })
			e.do(http.MethodGet, "/", nil) // starts the probe
			e.waitDown(true)
			resp := e.enter(p, "/checkout")
			body := readBody(t, resp)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if c.status == http.StatusSeeOther {
				if resp.Header.Get("Location") != "/checkout" {
					t.Errorf("Location %q", resp.Header.Get("Location"))
				}
				return
			}
			if !strings.Contains(body, `action="`+EnterPath+`"`) || !strings.Contains(body, `name="pass"`) {
				t.Errorf("no retry form: %s", body)
			}
			// Back up: the retry works.
			e.room.set(func(f *fakeRoom) { f.down = "" })
			e.clock.Add(downProbeEvery)
			if resp := e.enter(p, "/checkout"); resp.StatusCode != http.StatusSeeOther {
				t.Errorf("retry after the outage: %d", resp.StatusCode)
			}
		})
	}
}

func TestJWKSRotation(t *testing.T) {
	e := newEnv(t, nil)
	e.mustEnter() // fetches the JWKS with k1
	if got := e.room.count("jwks"); got != 1 {
		t.Fatalf("%d JWKS fetches, want 1", got)
	}
	k2 := newKey(t, "k2")
	e.room.set(func(f *fakeRoom) { f.keys = []signingKey{k2, e.key} }) // rotation: k2 current, k1 previous
	signK2 := func() string {
		now := e.clock.Now()
		return e.room.sign(k2, passOpts{room: testRoom, aud: e.shop.URL, jti: randID(), iat: now, exp: now.Add(5 * time.Minute)})
	}
	steps := []struct {
		name    string
		advance time.Duration
		pass    func() string
		status  int
		fetches int
	}{
		{"new kid within 30 s of the last fetch: retry, no fetch", 10 * time.Second, signK2, http.StatusServiceUnavailable, 1},
		{"new kid after 30 s: refetch", 25 * time.Second, signK2, http.StatusSeeOther, 2},
		{"previous key still listed", 0, func() string { return e.pass(nil) }, http.StatusSeeOther, 2},
		{"a forged kid after 30 s costs one fetch", 31 * time.Second, func() string {
			now := e.clock.Now()
			return e.room.sign(newKey(t, "k9"), passOpts{room: testRoom, aud: e.shop.URL, jti: randID(), iat: now, exp: now.Add(time.Minute)})
		}, http.StatusForbidden, 3},
		{"previous key dropped: refused after the cache ages", 0, nil, 0, 0},
	}
	for _, s := range steps {
		if s.pass == nil {
			break
		}
		e.clock.Add(s.advance)
		resp := e.enter(s.pass(), "/checkout")
		if resp.StatusCode != s.status {
			t.Errorf("%s: status %d, want %d", s.name, resp.StatusCode, s.status)
		}
		if got := e.room.count("jwks"); got != s.fetches {
			t.Errorf("%s: %d JWKS fetches, want %d", s.name, got, s.fetches)
		}
	}
	e.room.set(func(f *fakeRoom) { f.keys = []signingKey{k2} })
	e.clock.Add(jwksMaxAge)
	if resp := e.enter(e.pass(nil), "/checkout"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a key dropped from the JWKS still verifies: %d", resp.StatusCode)
	}
	// The stale cache keeps verifying while waitingroom is down.
	e.room.set(func(f *fakeRoom) { f.down = "503" })
	e.clock.Add(jwksMaxAge)
	if _, err := e.gate.verify(t.Context(), signK2()); err != nil {
		t.Errorf("stale JWKS while down: %v", err)
	}
}

func TestLiveCacheBounded(t *testing.T) {
	c := newLiveCache(100)
	now := time.Now()
	for i := 0; i < 1000; i++ {
		c.remember(fmt.Sprintf("session-%04d-xxxxxxxx", i), Session{}, true, now.Add(time.Minute), now)
	}
	if n := c.len(); n > 100 {
		t.Errorf("%d entries, bound 100", n)
	}
	e := newEnv(t, nil)
	e.gate.live = newLiveCache(5)
	for i := 0; i < 20; i++ {
		e.browser.Jar = nil
		jar, _ := cookiejar.New(nil)
		e.browser.Jar = jar
		e.mustEnter()
		if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("session %d: %d", i, resp.StatusCode)
		}
	}
	if n := e.gate.live.len(); n > 5 {
		t.Errorf("%d entries, bound 5", n)
	}
}

func TestPickLang(t *testing.T) {
	cases := map[string]string{
		"":                           "en",
		"ko":                         "ko",
		"ko-KR,ko;q=0.9,en-US;q=0.8": "ko",
		"en-US,en;q=0.9,ko;q=0.8":    "en",
		"fr,ko;q=0.5":                "ko",
		"fr,de":                      "en",
		"ko;q=0,en":                  "en",
		"en;q=0.2,ko;q=0.7":          "ko",
	}
	for in, want := range cases {
		if got := pickLang(in); got != want {
			t.Errorf("pickLang(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewChecksOptions(t *testing.T) {
	ok := Options{RoomURL: "https://queue.example", Room: "sale", APIKey: "k", Audience: "https://shop.example"}
	cases := []struct {
		name string
		mod  func(*Options)
		ok   bool
	}{
		{"valid", func(*Options) {}, true},
		{"audience with a slash", func(o *Options) { o.Audience = "https://shop.example/" }, true},
		{"no room URL", func(o *Options) { o.RoomURL = "" }, false},
		{"room URL with userinfo", func(o *Options) { o.RoomURL = "https://user:pw@queue.example" }, false},
		{"relative room URL", func(o *Options) { o.RoomURL = "/queue" }, false},
		{"ftp room URL", func(o *Options) { o.RoomURL = "ftp://queue.example" }, false},
		{"no room", func(o *Options) { o.Room = "" }, false},
		{"room with a slash", func(o *Options) { o.Room = "a/b" }, false},
		{"no API key", func(o *Options) { o.APIKey = "" }, false},
		{"audience with a path", func(o *Options) { o.Audience = "https://shop.example/checkout" }, false},
		{"no audience", func(o *Options) { o.Audience = "" }, false},
	}
	for _, c := range cases {
		o := ok
		c.mod(&o)
		g, err := New(o)
		if (err == nil) != c.ok {
			t.Errorf("%s: New = %v", c.name, err)
		}
		if err == nil && (g.opts.Timeout != 2*time.Second || g.opts.RenewEvery != 10*time.Second) {
			t.Errorf("%s: defaults %s %s", c.name, g.opts.Timeout, g.opts.RenewEvery)
		}
	}
}

func TestRecoversAfterAnOutage(t *testing.T) {
	yes := true
	e := newEnv(t, func(o *Options) { o.FailOpen = &yes })
	e.mustEnter()
	e.room.set(func(f *fakeRoom) { f.down = "503" })
	e.clock.Add(11 * time.Second)
	if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a failed renew before the probe confirms: %d, want 503", resp.StatusCode)
	}
	e.waitDown(true)
	if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("down, failing open: %d", resp.StatusCode)
	}
	e.room.set(func(f *fakeRoom) { f.down = "" })
	stranger := newEnv(t, nil)
	stranger.shop, stranger.gate = e.shop, e.gate
	e.clock.Add(downProbeEvery)
	stranger.do(http.MethodGet, "/checkout", nil) // starts a probe downProbeEvery later
	e.waitDown(false)
	if resp := stranger.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after the outage a visitor without a session got %d, want 303 to the room", resp.StatusCode)
	}
}

// TestBlipIsNoOutage: calls of requests that fail while the probe gets
// answers fail closed, one by one; waitingroom never counts as down.
func TestBlipIsNoOutage(t *testing.T) {
	yes := true
	e := newEnv(t, func(o *Options) { o.FailOpen = &yes })
	e.mustEnter()
	e.waitProbed() // the first request's
	e.room.set(func(f *fakeRoom) { f.refuse = map[string]int{"renew": 503} })
	for i := 0; i < 3; i++ {
		e.clock.Add(11 * time.Second)
		if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("renew %d failed: %d, want 503", i, resp.StatusCode)
		}
		e.waitProbed()
	}
	if got := e.room.count("gate"); got != 4 {
		t.Errorf("%d probes, want 4 (the first, and one per failed renew)", got)
	}
	if e.gate.health.isDown() {
		t.Error("failed renews marked waitingroom down while the probe got answers")
	}
	stranger := newEnv(t, nil)
	stranger.shop, stranger.gate = e.shop, e.gate
	if resp := stranger.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("a visitor without a session got %d, want 303 to the room", resp.StatusCode)
	}
}

// TestSessionFrom: a protected handler sees the session of the redeem,
// then of a renew; failing open, it sees none.
func TestSessionFrom(t *testing.T) {
	e := newEnv(t, nil)
	e.mustEnter()
	want := "true " + testRoom + " sub-visitor-hash idle"
	for i, advance := range []time.Duration{0, 11 * time.Second} { // from the redeem, then from a renew
		e.clock.Add(advance)
		if got := readBody(t, e.do(http.MethodGet, "/whoami", nil)); got != want {
			t.Errorf("request %d: %q, want %q", i, got, want)
		}
	}
	if e.room.count("renew") != 1 {
		t.Errorf("%d renews", e.room.count("renew"))
	}
	yes := true
	open := newEnv(t, func(o *Options) { o.FailOpen = &yes })
	open.mustEnter()
	// The first request's probe must have ended: one still under way
	// would take the failed renew's place and find waitingroom up.
	open.waitProbed()
	open.room.set(func(f *fakeRoom) { f.down = "503" })
	open.clock.Add(11 * time.Second)
	open.do(http.MethodGet, "/whoami", nil) // fails closed, starts the probe
	open.waitDown(true)
	if got := readBody(t, open.do(http.MethodGet, "/whoami", nil)); !strings.HasPrefix(got, "false") {
		t.Errorf("failing open: %q, want no session", got)
	}
}

func TestDoubleSubmit(t *testing.T) {
	e := newEnv(t, nil)
	p := e.pass(nil)
	for i := 0; i < 2; i++ {
		resp := e.enter(p, "/checkout")
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/checkout" {
			t.Errorf("submit %d: %d %q, want 303 /checkout", i, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if got := e.room.count("redeem"); got != 2 {
		t.Errorf("%d redeems, want 2 (the second answered 409)", got)
	}
	if n := len(e.room.liveSessions()); n != 1 {
		t.Errorf("%d sessions, want 1", n)
	}
}

// TestBuyerLeavingIsNoOutage: a buyer who leaves while their session's
// renew is at waitingroom does not cut the renew short: it completes,
// and neither fails the next request nor counts as an outage.
func TestBuyerLeavingIsNoOutage(t *testing.T) {
	no := false
	e := newEnv(t, func(o *Options) { o.FailOpen = &no })
	e.mustEnter()
	// left is closed once the shop has seen the buyer leave.
	left := make(chan struct{})
	e.mux.Handle("/leaving", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		go func() {
			<-r.Context().Done()
			close(left)
		}()
		e.gate.Protect(http.NotFoundHandler()).ServeHTTP(w, r)
	}))
	release := e.room.hold("renew")
	defer release()
	e.clock.Add(11 * time.Second)
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.shop.URL+"/leaving", nil)
	if err != nil {
		t.Fatal(err)
	}
	gone := make(chan error, 1)
	go func() {
		resp, err := e.browser.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		gone <- err
	}()
	waitFor(t, "the renew at waitingroom", func() bool { return e.room.heldNow("renew") == 1 })
	leave()
	if err := <-gone; err == nil {
		t.Fatal("the request of the buyer who left was answered")
	}
	select {
	case <-left: // a renew tied to the buyer's request would end now
	case <-time.After(hangTimeout):
		t.Fatal("the shop never saw the buyer leave")
	}
	release()
	waitFor(t, "the renew to complete without its buyer", func() bool { return e.renewsRunning() == 0 })
	if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("after a buyer left mid-renew: %d, want 200", resp.StatusCode)
	}
	if got := e.room.count("renew"); got != 1 {
		t.Errorf("%d renews, want the one that completed", got)
	}
	if e.gate.health.isDown() {
		t.Error("a buyer leaving marked waitingroom down")
	}
}

func TestNewPassReplacesSession(t *testing.T) {
	e := newEnv(t, nil)
	e.mustEnter()
	e.mustEnter() // a second pass in the same browser
	if n := len(e.room.liveSessions()); n != 1 {
		t.Errorf("%d sessions hold slots, want 1", n)
	}
	if got := e.room.count("end"); got != 1 {
		t.Errorf("%d end calls, want 1", got)
	}
	if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the new session answered %d", resp.StatusCode)
	}
}
