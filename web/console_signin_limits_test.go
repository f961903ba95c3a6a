package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/server/operator"
	"waitingroom/web/console"
)

// countingOperators counts the password checks (Authenticate) under way
// and the most seen at once. While holding, a check of floodPassword
// tells entered and waits for hold to close.
type countingOperators struct {
	console.Operators
	calls, now, most atomic.Int64
	holding          atomic.Bool
	hold, entered    chan struct{}
}

// floodPassword is the wrong password of the floods.
const floodPassword = "wrong password!"

func (c *countingOperators) Authenticate(ctx context.Context, name, password string) error {
	c.calls.Add(1)
	n := c.now.Add(1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	defer c.now.Add(-1)
	if password == floodPassword && c.holding.Load() {
		c.entered <- struct{}{}
		<-c.hold
	}
	return c.Operators.Authenticate(ctx, name, password)
}

// newCountingHarness is a console harness behind a trusted loopback proxy
// whose operators count their password checks; with alice, when
// withAlice.
func newCountingHarness(t *testing.T, withAlice bool) (*harness, *countingOperators) {
	t.Helper()
	var ops *countingOperators
	h, _ := newConsoleHarness(t, func(o *Options) {
		o.TrustedProxies = loopbackProxy
		ops = &countingOperators{Operators: o.Operators, hold: make(chan struct{}), entered: make(chan struct{}, 1024)}
		o.Operators = ops
	})
	if withAlice {
		if err := ops.Operators.(*operator.Store).Add(context.Background(), "alice", "correct horse battery"); err != nil {
			t.Fatal(err)
		}
	}
	return h, ops
}

// burst posts the sign-in form f from each client at once and returns
// the responses' statuses, Retry-After headers and bodies, in order.
func burst(t *testing.T, h *harness, clients []string, f url.Values) (codes []int, retry, bodies []string) {
	t.Helper()
	return burstEach(t, h, clients, func(int) url.Values { return f })
}

// burstEach is burst with the form form(i) from client i.
func burstEach(t *testing.T, h *harness, clients []string, form func(i int) url.Values) (codes []int, retry, bodies []string) {
	t.Helper()
	codes, retry, bodies = make([]int, len(clients)), make([]string, len(clients)), make([]string, len(clients))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, client := range clients {
		wg.Go(func() {
			<-start
			req, _ := http.NewRequest("POST", h.srv.URL+"/admin/signin", strings.NewReader(form(i).Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-Forwarded-For", client)
			req.Header.Set("Accept-Language", "ko")
			resp, err := noRedirects().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			codes[i], retry[i], bodies[i] = resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
		})
	}
	close(start)
	wg.Wait()
	return codes, retry, bodies
}

// TestConsolePasswordChecksAreBounded: a burst of wrong passwords from
// many clients at many names runs at most console.SigninUntrustedHashes password
// checks at once; the rest are refused at once with 429, a console page
// in the operator's language.
func TestConsolePasswordChecksAreBounded(t *testing.T) {
	h, ops := newCountingHarness(t, true)
	clients := make([]string, 24)
	for i := range clients {
		clients[i] = fmt.Sprintf("198.51.100.%d", i+1)
	}
	codes, retry, bodies := burstEach(t, h, clients, func(i int) url.Values {
		return url.Values{"name": {fmt.Sprintf("guess%d", i)}, "password": {"wrong password!"}}
	})
	var wrong, busy int
	for i, code := range codes {
		switch code {
		case 401:
			wrong++
		case 429:
			busy++
			if retry[i] != "1" || !strings.Contains(bodies[i], "로그인 요청이 몰려") || !strings.Contains(bodies[i], "<h1>잠시 후 다시 시도</h1>") {
				t.Errorf("busy answer: Retry-After %q %.400s", retry[i], bodies[i])
			}
		default:
			t.Errorf("client %d: %d %.300s", i, code, bodies[i])
		}
	}
	if most := ops.most.Load(); most > console.SigninUntrustedHashes || most < 1 {
		t.Fatalf("%d password checks at once, want 1 to %d", most, console.SigninUntrustedHashes)
	}
	if wrong == 0 || busy == 0 || int(ops.calls.Load()) != wrong {
		t.Fatalf("%d wrong, %d busy, %d checks", wrong, busy, ops.calls.Load())
	}
	all, untrusted := h.web.console.HashSlots()
	if n, u := len(all), len(untrusted); n != 0 || u != 0 {
		t.Fatalf("%d slots (%d untrusted) still held", n, u)
	}
	// Every slot taken: refused without a check, and not counted as a
	// failure of the client, who may try again once a slot is free.
	for range console.SigninHashes {
		all <- struct{}{}
	}
	before := ops.calls.Load()
	for i := range adminFailures + 2 {
		resp, body := postForm(t, noRedirects(), h.srv.URL+"/admin/signin", url.Values{"name": {"alice"}, "password": {"correct horse battery"}},
			map[string]string{"X-Forwarded-For": "203.0.113.5"})
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || !strings.Contains(body, "Too many sign-ins are being checked") {
			t.Fatalf("all slots busy, try %d: %d %q %.300s", i, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
	if ops.calls.Load() != before {
		t.Fatal("a password was checked without a slot")
	}
	for range console.SigninHashes {
		<-all
	}
	if resp, _ := postForm(t, noRedirects(), h.srv.URL+"/admin/signin", url.Values{"name": {"alice"}, "password": {"correct horse battery"}},
		map[string]string{"X-Forwarded-For": "203.0.113.5"}); resp.StatusCode != 303 {
		t.Fatalf("a free slot: %d", resp.StatusCode)
	}
}

// TestConsoleSignInBurstIsThrottled: one client's parallel burst of wrong
// passwords gets no more checks than a sequence would (each attempt is
// counted before its password is hashed); a success is not counted.
func TestConsoleSignInBurstIsThrottled(t *testing.T) {
	h, ops := newCountingHarness(t, true)
	// Here, only the client's count may refuse.
	h.web.console.SetHashSlots(100, 100)
	clients := make([]string, 3*adminFailures)
	for i := range clients {
		clients[i] = "192.0.2.77"
	}
	codes, _, bodies := burst(t, h, clients, url.Values{"name": {"bob"}, "password": {"wrong password!"}})
	tally := map[int]int{}
	for i, c := range codes {
		tally[c]++
		if c == 429 && !strings.Contains(bodies[i], "로그인 실패가 너무 많습니다") {
			t.Errorf("throttled: %.300s", bodies[i])
		}
	}
	if tally[401] != adminFailures || tally[429] != len(clients)-adminFailures || ops.calls.Load() != adminFailures {
		t.Fatalf("a burst of %d wrong passwords from one client: %v and %d checks, want %d tried", len(clients), tally, ops.calls.Load(), adminFailures)
	}
	// A success takes back its own count: after 9 failures and a
	// success, one more failure is let through.
	try := func(f url.Values) int {
		resp, _ := postForm(t, noRedirects(), h.srv.URL+"/admin/signin", f, map[string]string{"X-Forwarded-For": "192.0.2.78"})
		return resp.StatusCode
	}
	for i := range adminFailures - 1 {
		if c := try(url.Values{"token": {"a wrong guess"}}); c != 401 {
			t.Fatalf("failure %d: %d", i+1, c)
		}
	}
	if c := try(url.Values{"name": {"alice"}, "password": {"correct horse battery"}}); c != 303 {
		t.Fatalf("the right password: %d", c)
	}
	for i, want := range []int{401, 429} {
		if c := try(url.Values{"token": {"a wrong guess"}}); c != want {
			t.Fatalf("after the success, failure %d: %d, want %d", adminFailures+i, c, want)
		}
	}
}

// TestConsoleSignInWithoutOperators: with no operator account, a name
// and password are wrong without hashing anything.
func TestConsoleSignInWithoutOperators(t *testing.T) {
	h, ops := newCountingHarness(t, false)
	resp, body := postForm(t, noRedirects(), h.srv.URL+"/admin/signin", url.Values{"name": {"alice"}, "password": {"correct horse battery"}}, nil)
	if resp.StatusCode != 401 || !strings.Contains(body, "That name, password or token is not right") {
		t.Fatalf("%d %.300s", resp.StatusCode, body)
	}
	if n := ops.calls.Load(); n != 0 {
		t.Fatalf("%d password checks without any operator", n)
	}
}

// signinClock is the sign-in's fake clock.
type signinClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *signinClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *signinClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// withSigninClock gives h's sign-in a fake clock, standing still until
// moved.
func withSigninClock(h *harness) *signinClock {
	c := &signinClock{t: time.Now()}
	h.web.console.SetClock(c.Now)
	return c
}

// signinFrom posts the sign-in form f from client with c (nil: a client
// without cookies) and returns the status, Retry-After and body.
func signinFrom(t *testing.T, h *harness, c *http.Client, client string, f url.Values) (int, string, string) {
	t.Helper()
	if c == nil {
		c = noRedirects()
	}
	resp, body := postForm(t, c, h.srv.URL+"/admin/signin", f, map[string]string{"X-Forwarded-For": client, "Accept-Language": "ko"})
	return resp.StatusCode, resp.Header.Get("Retry-After"), body
}

// holdFlood has clients guess floodPassword at name, each perClient
// times, all at once, while password checks of it are held
// (countingOperators). It returns once every guess is either answered
// or held in its check; release lets the held ones go and returns every
// guess's status.
func holdFlood(t *testing.T, h *harness, ops *countingOperators, name string, clients, perClient int) (held int, release func() []int) {
	t.Helper()
	ops.holding.Store(true)
	total := clients * perClient
	codes := make(chan int, total)
	var wg sync.WaitGroup
	for i := range total {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", h.srv.URL+"/admin/signin",
				strings.NewReader(url.Values{"name": {name}, "password": {floodPassword}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.18.%d.%d", i%clients/200, i%clients%200+1))
			resp, err := noRedirects().Do(req)
			if err != nil {
				t.Error(err)
				codes <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	var got []int
	for len(got)+held < total {
		select {
		case c := <-codes:
			got = append(got, c)
		case <-ops.entered:
			held++
		}
	}
	return held, func() []int {
		ops.holding.Store(false)
		close(ops.hold)
		wg.Wait()
		close(codes)
		for c := range codes {
			got = append(got, c)
		}
		return got
	}
}

// TestConsoleSignInFloodKeepsDevice: while 64 addresses guess at alice's
// account and hold every password check untrusted attempts may take,
// alice signs in every time from the browser she signed in with before
// (its device cookie); the guesses are refused at once.
func TestConsoleSignInFloodKeepsDevice(t *testing.T) {
	h, ops := newCountingHarness(t, true)
	alice, _ := signInWith(t, h.srv, url.Values{"name": {"alice"}, "password": {"correct horse battery"}})
	held, release := holdFlood(t, h, ops, "alice", 64, 4)
	if held > console.SigninUntrustedHashes {
		t.Errorf("%d guesses checked at once, want at most %d", held, console.SigninUntrustedHashes)
	}
	for i := range 5 {
		if code, _, body := signinFrom(t, h, alice, "203.0.113.9", url.Values{"name": {"alice"}, "password": {"correct horse battery"}}); code != 303 {
			t.Errorf("alice's sign-in %d during the flood: %d %.300s", i+1, code, body)
		}
	}
	// The held guesses may outlast their request's time on a loaded
	// machine (503); every other one is refused at once.
	tally := map[int]int{}
	for _, c := range release() {
		tally[c]++
	}
	if tally[429] < 64*4-held || tally[401]+tally[503] > held {
		t.Fatalf("the flood's answers: %v, %d held", tally, held)
	}
	all, untrusted := h.web.console.HashSlots()
	if n, u := len(all), len(untrusted); n != 0 || u != 0 {
		t.Fatalf("%d slots (%d untrusted) still held", n, u)
	}
}

// TestConsoleSignInFloodAtAnotherAccount: once guesses at bob's account
// have locked it out, a flood of them hashes nothing, and alice, from a
// fresh address and without a device cookie, signs in every time.
func TestConsoleSignInFloodAtAnotherAccount(t *testing.T) {
	h, ops := newCountingHarness(t, true)
	withSigninClock(h)
	for i := range console.SigninBudget + 1 {
		code, retry, body := signinFrom(t, h, nil, fmt.Sprintf("192.0.2.%d", i+1), url.Values{"name": {"bob"}, "password": {floodPassword}})
		want := 401
		if i == console.SigninBudget {
			want = 429
			if retry != "60" || !strings.Contains(body, "이 계정의 로그인 실패가 너무 많습니다. 1분 후에 다시 시도하거나, 전에 로그인한 적 있는 브라우저에서") {
				t.Errorf("bob locked out: Retry-After %q %.400s", retry, body)
			}
		}
		if code != want {
			t.Fatalf("guess %d at bob: %d, want %d", i+1, code, want)
		}
	}
	_, release := holdFlood(t, h, ops, "bob", 64, 4)
	for i := range 3 {
		if code, _, body := signinFrom(t, h, nil, "203.0.113.10", url.Values{"name": {"alice"}, "password": {"correct horse battery"}}); code != 303 {
			t.Errorf("alice's sign-in %d during the flood at bob: %d %.300s", i+1, code, body)
		}
	}
	for i, c := range release() {
		if c != 429 {
			t.Fatalf("flood guess %d at the locked-out bob: %d", i, c)
		}
	}
	if n := ops.calls.Load(); n != console.SigninBudget+3 {
		t.Fatalf("%d password checks, want %d", n, console.SigninBudget+3)
	}
}

// TestConsoleSignInAccountLockout: 300 guesses at one account from 300
// addresses get console.SigninBudget checks, then a lockout that doubles with
// each further failure; a browser alice signed in with before still gets
// in.
func TestConsoleSignInAccountLockout(t *testing.T) {
	h, ops := newCountingHarness(t, true)
	alice, _ := signInWith(t, h.srv, url.Values{"name": {"alice"}, "password": {"correct horse battery"}})
	clk := withSigninClock(h)
	before := ops.calls.Load()
	guess := func(i int) (int, string, string) {
		return signinFrom(t, h, nil, fmt.Sprintf("10.9.%d.%d", i/250, i%250+1), url.Values{"name": {"alice"}, "password": {"a wrong guess"}})
	}
	tally := map[int]int{}
	for i := range 300 {
		code, retry, body := guess(i)
		tally[code]++
		if code == 429 && (retry != "60" || !strings.Contains(body, "1분 후에 다시 시도")) {
			t.Fatalf("guess %d: Retry-After %q %.400s", i+1, retry, body)
		}
	}
	if checks := ops.calls.Load() - before; tally[401] != console.SigninBudget || tally[429] != 300-console.SigninBudget || checks != console.SigninBudget {
		t.Fatalf("300 guesses at alice: %v and %d checks", tally, checks)
	}
	for i, lock := range []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute} {
		clk.Add(lock)
		if code, _, _ := guess(300 + 2*i); code != 401 {
			t.Fatalf("after lockout %d: %d", i+1, code)
		}
		code, retry, _ := guess(301 + 2*i)
		if want := strconv.Itoa(int(2 * lock / time.Second)); code != 429 || retry != want {
			t.Fatalf("lockout %d: %d, Retry-After %q, want %s", i+2, code, retry, want)
		}
	}
	if code, _, body := signinFrom(t, h, alice, "10.9.200.1", url.Values{"name": {"alice"}, "password": {"correct horse battery"}}); code != 303 {
		t.Fatalf("alice's browser, locked out: %d %.300s", code, body)
	}
}

// TestConsoleSignInNetworkOnlyFails: a network whose guesses only fail
// (at ever new names) is refused before any hashing, for longer each
// time; a success clears it.
func TestConsoleSignInNetworkOnlyFails(t *testing.T) {
	h, ops := newCountingHarness(t, true)
	clk := withSigninClock(h)
	n := 0
	guess := func() (int, string) {
		n++
		code, retry, _ := signinFrom(t, h, nil, "192.0.2.200", url.Values{"name": {fmt.Sprintf("guess%d", n)}, "password": {"a wrong guess"}})
		return code, retry
	}
	for i := range console.SigninBudget {
		if code, _ := guess(); code != 401 {
			t.Fatalf("guess %d: %d", i+1, code)
		}
	}
	for _, c := range []struct {
		wait  time.Duration
		retry string
	}{{0, "60"}, {time.Minute, "120"}, {2 * time.Minute, "240"}} {
		clk.Add(c.wait)
		before := ops.calls.Load()
		if c.wait > 0 {
			if code, _ := guess(); code != 401 {
				t.Fatalf("after %v: %d", c.wait, code)
			}
		}
		for range console.SigninBudget {
			if code, retry := guess(); code != 429 || (c.wait > 0 && retry != c.retry) {
				t.Fatalf("after %v: %d, Retry-After %q, want 429 and %s", c.wait, code, retry, c.retry)
			}
		}
		if checks := ops.calls.Load() - before; checks > 1 {
			t.Fatalf("after %v: %d password checks, want at most 1", c.wait, checks)
		}
	}
	clk.Add(4 * time.Minute)
	if code, _, _ := signinFrom(t, h, nil, "192.0.2.200", url.Values{"name": {"alice"}, "password": {"correct horse battery"}}); code != 303 {
		t.Fatalf("alice from the network: %d", code)
	}
	for i := range console.SigninBudget {
		if code, _ := guess(); code != 401 {
			t.Fatalf("after a success, guess %d: %d", i+1, code)
		}
	}
}
