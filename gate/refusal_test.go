package gate

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRefusedCallFailsClosed: a renew that waitingroom refuses (a rotated
// API key, a throttle, the gate off, a malformed answer) fails closed for
// that request, even failing open, and never makes waitingroom "down" for
// visitors without a session.
func TestRefusedCallFailsClosed(t *testing.T) {
	cases := []struct {
		name   string
		status int
	}{
		{"401 api_key_invalid", http.StatusUnauthorized},
		{"403", http.StatusForbidden},
		{"404 gate_off", http.StatusNotFound},
		{"429", http.StatusTooManyRequests},
		{"malformed answer", http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			yes := true
			e := newEnv(t, func(o *Options) { o.FailOpen = &yes })
			e.mustEnter()
			e.room.set(func(f *fakeRoom) { f.refuse = map[string]int{"renew": c.status} })
			e.clock.Add(11 * time.Second)
			for i := 0; i < 3; i++ {
				resp := e.do(http.MethodGet, "/checkout", nil)
				if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("X-Waitingroom-Fail") != "" {
					t.Errorf("request %d with a refused renew: %d %q, want 503", i, resp.StatusCode, readBody(t, resp))
				}
			}
			if got := e.room.count("renew"); got != 1 {
				t.Errorf("%d renew calls, want 1 (then a pause)", got)
			}
			stranger := newEnv(t, nil)
			stranger.shop, stranger.gate = e.shop, e.gate
			if resp := stranger.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusSeeOther {
				t.Errorf("a visitor without a session: %d, want 303 to the room", resp.StatusCode)
			}
			if e.gate.health.isDown() {
				t.Error("a refused call marked waitingroom down")
			}
			if !strings.Contains(e.logs.String(), "refused") {
				t.Errorf("the refusal was not logged: %s", e.logs.String())
			}
		})
	}
}

// TestRefusedRedeemFailsClosed: an enter whose redeem is refused shows the
// retry form, failing open or not; the buyer does not go through.
func TestRefusedRedeemFailsClosed(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusTooManyRequests, http.StatusNotFound} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			yes := true
			e := newEnv(t, func(o *Options) { o.FailOpen = &yes })
			e.room.set(func(f *fakeRoom) { f.refuse = map[string]int{"redeem": status} })
			resp := e.enter(e.pass(nil), "/checkout")
			if body := readBody(t, resp); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, `name="pass"`) {
				t.Errorf("refused redeem: %d %q, want 503 with the retry form", resp.StatusCode, body)
			}
			if e.gate.health.isDown() {
				t.Error("a refused redeem marked waitingroom down")
			}
		})
	}
}

// TestForgedCookieCostsNoCall: a wr_gate cookie whose MAC does not verify
// is no session: to the room, with no call to waitingroom.
func TestForgedCookieCostsNoCall(t *testing.T) {
	yes := true
	e := newEnv(t, func(o *Options) { o.FailOpen = &yes; o.APIKey = "rotated-away-old-key" })
	other, err := New(Options{RoomURL: e.room.srv.URL, Room: testRoom, APIKey: "another-key", Audience: e.shop.URL})
	if err != nil {
		t.Fatal(err)
	}
	id := randID()
	good := e.gate.cookieValue(id)
	// One character off: the MAC's last character changed (to B where it
	// was A already, or the "forgery" is the good cookie, once in 64 runs).
	off := byte('A')
	if good[len(good)-1] == off {
		off = 'B'
	}
	forged := []string{
		testRoom + "." + randID(),                                          // the unsigned format
		testRoom + "." + randID() + "." + randID(),                         // a made-up MAC
		testRoom + "." + id + "." + good[len(good)-22:][:21] + string(off), // one character off
		other.cookieValue(id),                                              // signed under another API key
		"other-room." + id + "." + good[len(good)-22:],                     // another room
	}
	// The first request's probe ends before the flood: the flood makes
	// no call, so nothing starts another one.
	if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("before the flood: %d, want 303 to the room", resp.StatusCode)
	}
	e.waitProbed()
	const n = 200
	var wg sync.WaitGroup
	var through atomic.Int32
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, e.shop.URL+"/checkout", nil)
			req.Header.Set("Cookie", CookieName+"="+forged[i%len(forged)])
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return
			}
			through.Add(1)
		}()
	}
	wg.Wait()
	if got := e.room.count("renew"); got != 0 {
		t.Errorf("%d forged cookies cost %d renew calls, want 0", n, got)
	}
	if through.Load() != 0 || e.gate.health.isDown() {
		t.Errorf("%d forged cookies got through; down %v", through.Load(), e.gate.health.isDown())
	}
	if _, ok := e.gate.sessionID(&http.Request{Header: http.Header{"Cookie": {CookieName + "=" + good}}}); !ok {
		t.Error("the gate's own cookie does not verify")
	}
}

// TestFloodIsNoOutage: a flood of sessions to check against a busy
// waitingroom keeps at most maxCalls calls in flight, sends those it has
// no slot for to the room, and never opens the shop to visitors without
// a session.
//
// The fake waitingroom holds every renew until the test lets them go, so
// the flood's calls stay in flight for as long as the test looks. The
// probe, which takes no slot, then waits at waitingroom behind at most
// maxCalls calls: with a waitingroom that serves c calls at a time in s
// each, at most maxCalls / c × s, which the gate's Timeout must cover.
// The test checks that bound, not a duration: without it, the probe would
// find all 2 × maxCalls calls ahead of it.
func TestFloodIsNoOutage(t *testing.T) {
	yes := true
	e := newEnv(t, func(o *Options) {
		o.FailOpen = &yes
		o.Timeout = 2 * hangTimeout // a held call outlasts the test's waits
	})
	counting := &countingTransport{inner: e.gate.client.Transport}
	e.gate.client = &http.Client{Transport: counting, CheckRedirect: e.gate.client.CheckRedirect}
	if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("before: %d", resp.StatusCode)
	}
	e.waitProbed()
	release := e.room.hold("renew")
	defer release()

	const n = 2 * maxCalls
	codes := make(chan int, n)
	visitors := &http.Client{CheckRedirect: e.browser.CheckRedirect} // the 303 to the room is the answer
	for i := 0; i < n; i++ {
		go func() {
			req, _ := http.NewRequest(http.MethodGet, e.shop.URL+"/checkout", nil)
			req.Header.Set("Cookie", CookieName+"="+e.gate.cookieValue(randID()))
			resp, err := visitors.Do(req)
			if err != nil {
				codes <- 0 // no answer
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	// answers reads k of the flood's answers: each one to the room.
	answers := func(k int, what string) {
		t.Helper()
		timeout := time.After(hangTimeout)
		other := map[int]int{}
		for range k {
			select {
			case c := <-codes:
				if c != http.StatusSeeOther {
					other[c]++
				}
			case <-timeout:
				t.Fatalf("%s: the flood's answers did not come within %v", what, hangTimeout)
			}
		}
		if len(other) > 0 {
			t.Errorf("%s: unknown sessions got %v (status: count), want each 303 to the room", what, other)
		}
	}
	// maxCalls sessions take every call slot, their renews held; the
	// other maxCalls find no slot and go to the room at once.
	waitFor(t, "maxCalls renews at waitingroom", func() bool { return e.room.heldNow("renew") == maxCalls })
	answers(n-maxCalls, "no call slot")

	// The settings are due again: a visitor without a session gets the
	// room, and starts a probe, which gets its answer.
	e.clock.Add(configTTL)
	if stranger := e.do(http.MethodGet, "/checkout", nil); stranger.StatusCode != http.StatusSeeOther {
		t.Errorf("a visitor without a session during the flood: %d, want 303", stranger.StatusCode)
	}
	e.waitProbed()
	if e.gate.health.isDown() {
		t.Error("the flood marked waitingroom down")
	}
	e.room.mu.Lock()
	ahead := e.room.probeSaw
	e.room.mu.Unlock()
	if ahead > maxCalls {
		t.Errorf("the probe found %d calls ahead of it at waitingroom, bound %d", ahead, maxCalls)
	}

	// Let the renews go: waitingroom knows none of these sessions.
	release()
	answers(maxCalls, "renewed")
	if p := counting.peak.Load(); p > maxCalls+1 { // +1: the probe takes no slot
		t.Errorf("%d calls in flight at waitingroom, bound %d", p, maxCalls)
	}
	if got := e.room.count("renew"); got != maxCalls {
		t.Errorf("%d renew calls, want %d (one per slot)", got, maxCalls)
	}
	if e.gate.health.isDown() {
		t.Error("the flood marked waitingroom down")
	}
}

// TestBusyMeansNoSession: with every call slot taken, a session live at
// its last renew is served from the cache, an unknown one goes to the room
// with its cookie kept.
func TestBusyMeansNoSession(t *testing.T) {
	e := newEnv(t, nil)
	e.mustEnter()
	e.gate.slots = make(chan struct{}, 1)
	e.gate.slots <- struct{}{}
	e.clock.Add(11 * time.Second)
	if resp := e.do(http.MethodGet, "/checkout", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("a cached live session while busy: %d, want 200", resp.StatusCode)
	}
	e.cookie(e.gate.cookieValue(randID()))
	resp := e.do(http.MethodGet, "/checkout", nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("an unknown session while busy: %d %q, want 303 keeping the cookie", resp.StatusCode, resp.Header.Get("Set-Cookie"))
	}
	if got := e.room.count("renew"); got != 0 {
		t.Errorf("%d renew calls while busy", got)
	}
}

// TestRetryLinkStaysOnSite: the retry page links to the request's path
// only when it is a path on this host.
func TestRetryLinkStaysOnSite(t *testing.T) {
	no := false
	e := newEnv(t, func(o *Options) { o.FailOpen = &no })
	e.room.set(func(f *fakeRoom) { f.refuse = map[string]int{"renew": 503} })
	h := e.gate.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	cases := map[string]string{
		"//evil.example/x":  `href="/"`,
		"/a/./b":            `href="/a/b"`,
		"/shop/../cart?a=1": `href="/cart?a=1"`,
	}
	for uri, want := range cases {
		req := httptest.NewRequest(http.MethodGet, "http://shop.example/", nil)
		req.URL.Path, req.URL.RawQuery, req.RequestURI = uri, "", uri
		if i := strings.IndexByte(uri, '?'); i >= 0 {
			req.URL.Path, req.URL.RawQuery = uri[:i], uri[i+1:]
		}
		req.Header.Set("Cookie", CookieName+"="+e.gate.cookieValue(randID()))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if body := w.Body.String(); w.Code != http.StatusServiceUnavailable || !strings.Contains(body, want) {
			t.Errorf("%s: %d, want 503 with %s: %s", uri, w.Code, want, body)
		}
	}
}

// TestDefaultClient: the default transport keeps maxCalls idle
// connections to waitingroom.
func TestDefaultClient(t *testing.T) {
	g, err := New(Options{RoomURL: "https://queue.example", Room: "sale", APIKey: "k", Audience: "https://shop.example:443"})
	if err != nil {
		t.Fatal(err)
	}
	tr, ok := g.client.Transport.(*http.Transport)
	if !ok || tr.MaxIdleConnsPerHost < maxCalls || tr.ResponseHeaderTimeout != g.opts.Timeout {
		t.Errorf("default transport %+v", g.client.Transport)
	}
	if g.opts.Audience != "https://shop.example" {
		t.Errorf("audience %q, want the default port dropped", g.opts.Audience)
	}
}

// countingTransport records the most requests in flight at once.
type countingTransport struct {
	inner          http.RoundTripper
	inflight, peak atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	n := c.inflight.Add(1)
	defer c.inflight.Add(-1)
	for p := c.peak.Load(); n > p && !c.peak.CompareAndSwap(p, n); p = c.peak.Load() {
	}
	return c.inner.RoundTrip(r)
}
