package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"
	"github.com/jonboulle/clockwork"

	"waitingroom/server/audit"
	"waitingroom/server/operator"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
	"waitingroom/web/console"
)

// testOperators hash passwords at argon2id's least cost: the sign-in
// tests check the console's rules, not the hash's cost (server/operator's
// tests check that).
var testOperators = operator.Options{Hash: &argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}}

// newConsoleHarness is newHarness with the console wired to a freshly
// migrated PostgreSQL: its operators, sessions and audit log.
func newConsoleHarness(t *testing.T, mut func(*Options)) (*harness, *store.DB) {
	t.Helper()
	db := storetest.Migrated(t, store.Postgres)
	ops, err := operator.New(db, testOperators)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(o *Options) {
		o.Operators, o.Audit = ops, audit.New(db)
		if mut != nil {
			mut(o)
		}
	})
	return h, db
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn signs in to the console of srv with the admin token and returns
// a client that carries the session cookie (it does not follow
// redirects) and the session's CSRF token, read from a page.
func signIn(t *testing.T, srv *httptest.Server, token string) (*http.Client, string) {
	t.Helper()
	return signInWith(t, srv, url.Values{"token": {token}})
}

// signInWith signs in with the form fields f (token, or name and
// password).
func signInWith(t *testing.T, srv *httptest.Server, f url.Values) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(srv.URL+"/admin/signin", f)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d, want 303", resp.StatusCode)
	}
	resp, err = c.Get(srv.URL + "/admin/signin")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfField.FindStringSubmatch(string(body))
	if m == nil {
		t.Fatalf("no csrf field on the signed-in page: %.300s", body)
	}
	return c, strings.TrimSpace(m[1])
}

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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	h, ops := newCountingHarness(t, false)
	resp, body := postForm(t, noRedirects(), h.srv.URL+"/admin/signin", url.Values{"name": {"alice"}, "password": {"correct horse battery"}}, nil)
	if resp.StatusCode != 401 || !strings.Contains(body, "That name, password or token is not right") {
		t.Fatalf("%d %.300s", resp.StatusCode, body)
	}
	if n := ops.calls.Load(); n != 0 {
		t.Fatalf("%d password checks without any operator", n)
	}
}

// withSigninClock gives h's sign-in a fake clock, standing still until
// moved.
func withSigninClock(h *harness) *clockwork.FakeClock {
	c := clockwork.NewFakeClockAt(time.Now())
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
	// At most the held guesses are checked (401); every other one is
	// refused (429, or 503 where a loaded machine ran past the request's
	// time before refusing it).
	tally := map[int]int{}
	for _, c := range release() {
		tally[c]++
	}
	if tally[401] > held || tally[401]+tally[429]+tally[503] != 64*4 {
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
	t.Parallel()
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
	t.Parallel()
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
		clk.Advance(lock)
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
	t.Parallel()
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
		clk.Advance(c.wait)
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
	clk.Advance(4 * time.Minute)
	if code, _, _ := signinFrom(t, h, nil, "192.0.2.200", url.Values{"name": {"alice"}, "password": {"correct horse battery"}}); code != 303 {
		t.Fatalf("alice from the network: %d", code)
	}
	for i := range console.SigninBudget {
		if code, _ := guess(); code != 401 {
			t.Fatalf("after a success, guess %d: %d", i+1, code)
		}
	}
}

// consoleCookieOf returns the wr_admin cookie c's jar holds for srv.
func consoleCookieOf(t *testing.T, c *http.Client, srv *httptest.Server) *http.Cookie {
	t.Helper()
	u, _ := url.Parse(srv.URL + "/admin/")
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == console.SessionCookie {
			return ck
		}
	}
	t.Fatal("no wr_admin cookie")
	return nil
}

func postForm(t *testing.T, c *http.Client, u string, f url.Values, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func noRedirects() *http.Client {
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func TestConsoleSignIn(t *testing.T) {
	t.Parallel()
	h, db := newConsoleHarness(t, func(o *Options) { o.TrustedProxies = loopbackProxy })
	ops := operatorsOf(t, db)
	if err := ops.Add(context.Background(), "alice", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		form   url.Values
		hdr    map[string]string
		who    string
		secure bool
	}{
		{"token", url.Values{"token": {testAdminToken}}, nil, "admin", false},
		{"operator", url.Values{"name": {"alice"}, "password": {"correct horse battery"}}, nil, "alice", false},
		{"behind a trusted TLS proxy", url.Values{"token": {testAdminToken}}, map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.7"}, "admin", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := postForm(t, noRedirects(), h.srv.URL+"/admin/signin", tt.form, tt.hdr)
			if resp.StatusCode != 303 || resp.Header.Get("Location") != "/admin/rooms" {
				t.Fatalf("sign-in: %d → %q %.200s", resp.StatusCode, resp.Header.Get("Location"), body)
			}
			var ck *http.Cookie
			for _, c := range resp.Cookies() {
				if c.Name == console.SessionCookie {
					ck = c
				}
			}
			if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/admin" ||
				ck.MaxAge != 12*60*60 || ck.Secure != tt.secure || len(ck.Value) != 43 {
				t.Fatalf("cookie %+v", ck)
			}
			if strings.Contains(resp.Header.Get("Set-Cookie"), testAdminToken) {
				t.Fatal("the token is in the cookie")
			}
			want := tt.who
			if want == "admin" {
				want = adminSessionOperator(testAdminToken) // the token's fingerprint
			}
			sess, err := ops.Session(context.Background(), ck.Value)
			if err != nil || sess.Operator != want {
				t.Fatalf("session %+v %v, want operator %q", sess, err, want)
			}
		})
	}
	// An untrusted client cannot claim TLS: its cookie is not Secure (it
	// would be dropped over plain HTTP).
	noProxy, _ := newConsoleHarness(t, nil)
	resp, _ := postForm(t, noRedirects(), noProxy.srv.URL+"/admin/signin", url.Values{"token": {testAdminToken}}, map[string]string{"X-Forwarded-Proto": "https"})
	if c := resp.Cookies(); len(c) != 1 || c[0].Secure {
		t.Fatalf("untrusted X-Forwarded-Proto: %+v", c)
	}
	// Every sign-in is in the audit log, without the secret.
	entries, err := audit.New(db).List(context.Background(), audit.Filter{})
	if err != nil || len(entries) != 3 {
		t.Fatalf("audit %+v %v", entries, err)
	}
	if e := entries[1]; e.Action != "operator.signin" || e.Actor != "alice" || e.New != "password" {
		t.Fatalf("audit entry %+v", e)
	}
}

func TestConsoleWrongSignInIsThrottled(t *testing.T) {
	t.Parallel()
	h, db := newConsoleHarness(t, func(o *Options) { o.TrustedProxies = loopbackProxy })
	if err := operatorsOf(t, db).Add(context.Background(), "alice", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	withSigninClock(h) // the failures' times stand still: Retry-After is the whole window
	try := func(client string, f url.Values) (*http.Response, string) {
		return postForm(t, noRedirects(), h.srv.URL+"/admin/signin", f, map[string]string{"X-Forwarded-For": client, "Accept-Language": "ko"})
	}
	wrong := []url.Values{
		{"name": {"alice"}, "password": {"wrong password!"}},
		{"name": {"nobody"}, "password": {"correct horse battery"}},
		{"token": {"guess"}},
		{"name": {"alice"}, "password": {strings.Repeat("x", 300)}},
	}
	for i := range adminFailures {
		resp, body := try("192.0.2.1", wrong[i%len(wrong)])
		if resp.StatusCode != 401 || len(resp.Cookies()) != 0 || !strings.Contains(body, "맞지 않습니다") || !strings.Contains(body, `lang="ko"`) {
			t.Fatalf("failure %d: %d %v %.300s", i, resp.StatusCode, resp.Cookies(), body)
		}
		if strings.Contains(body, "wrong password!") {
			t.Fatal("the password is echoed")
		}
	}
	for _, f := range []url.Values{wrong[0], {"name": {"alice"}, "password": {"correct horse battery"}}, {"token": {testAdminToken}}} {
		resp, body := try("192.0.2.1", f)
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if resp.StatusCode != 429 || len(resp.Cookies()) != 0 || secs < 50 || secs > 60 || !strings.Contains(body, "로그인 실패가 너무 많습니다") {
			t.Fatalf("after %d failures: %d Retry-After %d %.300s", adminFailures, resp.StatusCode, secs, body)
		}
	}
	// The admin API shares the count.
	if r := h.do(t, "GET", "/api/admin/rooms/"+h.room, "", map[string]string{"X-Forwarded-For": "192.0.2.1", "Authorization": "Bearer " + testAdminToken}, nil); r.status != 429 {
		t.Fatalf("admin API after console failures: %d", r.status)
	}
	if resp, _ := try("192.0.2.2", url.Values{"name": {"alice"}, "password": {"correct horse battery"}}); resp.StatusCode != 303 {
		t.Fatalf("another client: %d", resp.StatusCode)
	}
}

func TestConsoleSessionGuards(t *testing.T) {
	t.Parallel()
	h, db := newConsoleHarness(t, nil)
	c, csrf := signIn(t, h.srv, testAdminToken)
	ck := consoleCookieOf(t, c, h.srv)
	var changes int
	page := h.web.console.Page(func(w http.ResponseWriter, r *http.Request, s console.Session) {
		fmt.Fprintf(w, "page of %s", s.Operator)
	})
	change := h.web.console.Change(func(w http.ResponseWriter, r *http.Request, s console.Session) {
		changes++
		fmt.Fprintf(w, "changed by %s: %s", s.Operator, r.PostForm.Get("v"))
	})
	serve := func(hf http.HandlerFunc, method, target, body string, withCookie bool) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		if body != "" {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if withCookie {
			r.AddCookie(ck)
		}
		w := httptest.NewRecorder()
		hf(w, r)
		return w
	}
	if w := serve(page, "GET", "/admin/rooms?x=1", "", true); w.Code != 200 || w.Body.String() != "page of admin" || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("page: %d %q", w.Code, w.Body)
	}
	if w := serve(page, "GET", "/admin/rooms?x=1", "", false); w.Code != 303 || w.Header().Get("Location") != "/admin/signin?next=%2Fadmin%2Frooms%3Fx%3D1" {
		t.Fatalf("page without a session: %d %q", w.Code, w.Header().Get("Location"))
	}
	for _, tt := range []struct {
		name       string
		body       string
		withCookie bool
		want       int
	}{
		{"no csrf field", "v=1", true, 403},
		{"a wrong csrf field", "v=1&csrf=" + url.QueryEscape(csrf[:len(csrf)-1]+string(csrf[len(csrf)-1]^1)), true, 403},
		{"an empty csrf field", "v=1&csrf=", true, 403},
		{"no session", "v=1&csrf=" + csrf, false, 403},
		{"too large", "csrf=" + csrf + "&v=" + strings.Repeat("a", 70<<10), true, 413},
		{"the session's csrf", "v=1&csrf=" + csrf, true, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := changes
			w := serve(change, "POST", "/admin/x", tt.body, tt.withCookie)
			if w.Code != tt.want {
				t.Fatalf("%d, want %d: %.300s", w.Code, tt.want, w.Body)
			}
			if tt.want != 200 {
				if changes != before {
					t.Fatal("the handler ran")
				}
				if !strings.Contains(w.Body.String(), `<h1>`) || strings.Contains(w.Body.String(), "<h1>"+strconv.Itoa(tt.want)) {
					t.Fatalf("not a console error page: %.300s", w.Body)
				}
			} else if changes != before+1 || w.Body.String() != "changed by admin: 1" {
				t.Fatalf("change: %q", w.Body)
			}
		})
	}
	// A CSRF token in the query string is not the form's.
	if w := serve(change, "POST", "/admin/x?csrf="+csrf, "v=1", true); w.Code != 403 {
		t.Fatalf("csrf in the query: %d", w.Code)
	}
	// An expired session is gone.
	if _, err := db.Exec(`UPDATE admin_sessions SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if w := serve(page, "GET", "/admin/rooms", "", true); w.Code != 303 || !strings.HasPrefix(w.Header().Get("Location"), "/admin/signin?next=") {
		t.Fatalf("expired session: %d %q", w.Code, w.Header().Get("Location"))
	}
	if w := serve(change, "POST", "/admin/x", "v=1&csrf="+csrf, true); w.Code != 403 || changes != 1 {
		t.Fatalf("expired session, change: %d", w.Code)
	}
	var left int
	db.Get(&left, `SELECT COUNT(*) FROM admin_sessions`)
	if left != 0 {
		t.Fatalf("%d expired sessions left", left)
	}
}

func TestConsoleSignOut(t *testing.T) {
	t.Parallel()
	h, db := newConsoleHarness(t, nil)
	c, csrf := signIn(t, h.srv, testAdminToken)
	ck := consoleCookieOf(t, c, h.srv)
	live := func() bool {
		_, err := operatorsOf(t, db).Session(context.Background(), ck.Value)
		return err == nil
	}
	// Refused: without the csrf field, with a wrong one, from another site.
	for _, tt := range []struct {
		name string
		form url.Values
		hdr  map[string]string
	}{
		{"no csrf", url.Values{}, nil},
		{"wrong csrf", url.Values{"csrf": {"x" + csrf}}, nil},
		{"cross-site", url.Values{"csrf": {csrf}}, map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"cross-origin, old browser", url.Values{"csrf": {csrf}}, map[string]string{"Origin": "https://evil.example"}},
	} {
		resp, body := postForm(t, c, h.srv.URL+"/admin/signout", tt.form, tt.hdr)
		if resp.StatusCode != 403 || !live() || !strings.Contains(body, "Nothing was changed") || !strings.Contains(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d live %v %.300s", tt.name, resp.StatusCode, live(), body)
		}
	}
	resp, _ := postForm(t, c, h.srv.URL+"/admin/signout", url.Values{"csrf": {csrf}}, nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/admin/signin?signedout=1" || live() {
		t.Fatalf("sign-out: %d %q live %v", resp.StatusCode, resp.Header.Get("Location"), live())
	}
	if cs := resp.Cookies(); len(cs) != 1 || cs[0].MaxAge >= 0 || cs[0].Path != "/admin" {
		t.Fatalf("the cookie is not deleted: %+v", cs)
	}
	// The old cookie, replayed, opens nothing.
	req, _ := http.NewRequest("POST", h.srv.URL+"/admin/signout", strings.NewReader("csrf="+csrf))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(ck)
	r2, err := noRedirects().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 403 {
		t.Fatalf("replayed cookie: %d", r2.StatusCode)
	}
}

func TestConsoleNextStaysLocal(t *testing.T) {
	t.Parallel()
	h, _ := newConsoleHarness(t, nil)
	for _, tt := range []struct{ next, want string }{
		{"", "/admin/rooms"},
		{"/admin/orders?room=a&page=2", "/admin/orders?room=a&page=2"},
		{"/admin/rooms/drop/settings", "/admin/rooms/drop/settings"},
		{"https://evil.example/admin/", "/admin/rooms"},
		{"//evil.example/admin/", "/admin/rooms"},
		{"/\\evil.example", "/admin/rooms"},
		{"/admin/\\evil", "/admin/rooms"},
		{"/admin/../r/x", "/admin/rooms"},
		{"/admin", "/admin/rooms"},
		{"/r/drop", "/admin/rooms"},
		{"javascript:alert(1)", "/admin/rooms"},
		{"/admin/\r\nSet-Cookie: x=1", "/admin/rooms"},
		{"/admin/" + strings.Repeat("a", 2000), "/admin/rooms"},
	} {
		resp, _ := postForm(t, noRedirects(), h.srv.URL+"/admin/signin", url.Values{"token": {testAdminToken}, "next": {tt.next}}, nil)
		if got := resp.Header.Get("Location"); resp.StatusCode != 303 || got != tt.want {
			t.Errorf("next=%q: %d → %q, want %q", tt.next, resp.StatusCode, got, tt.want)
		}
	}
	// The page carries a local next into its forms, and drops another.
	for _, tt := range []struct {
		next string
		want bool
	}{{"/admin/audit", true}, {"https://evil.example", false}} {
		r := h.do(t, "GET", "/admin/signin?next="+url.QueryEscape(tt.next), "", nil, nil)
		if r.status != 200 || strings.Contains(r.body, `value="`+tt.next+`"`) != tt.want {
			t.Errorf("page with next=%q: %d %.400s", tt.next, r.status, r.body)
		}
	}
	for _, p := range []string{"/admin", "/admin/"} {
		resp, err := noRedirects().Get(h.srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 303 || resp.Header.Get("Location") != "/admin/rooms" {
			t.Fatalf("%s: %d %q", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
}

func TestConsoleSignInPage(t *testing.T) {
	t.Parallel()
	withOperator, withOperatorDB := newConsoleHarness(t, func(o *Options) { o.AdminToken = "" })
	if err := operatorsOf(t, withOperatorDB).Add(context.Background(), "alice", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	neither, _ := newConsoleHarness(t, func(o *Options) { o.AdminToken = "" })
	tokenOnly, tokenOnlyDB := newConsoleHarness(t, nil)
	noDB := newHarness(t, nil)
	for _, tt := range []struct {
		name     string
		h        *harness
		lang     string
		want     []string
		wantNot  []string
		wantCode int
	}{
		{"token only", tokenOnly, "en", []string{`name="token"`, `lang="en"`, `href="#main"`, "/static/console."}, []string{`name="password"`, "/admin/orders"}, 200},
		{"operators, no token", withOperator, "en", []string{`name="password"`, `autocomplete="current-password"`}, []string{`name="token"`}, 200},
		{"neither", neither, "ko", []string{"콘솔 로그인이 설정되지 않았습니다", "waitingroom admin add-user", `lang="ko"`}, []string{"<form"}, 200},
		{"no database", noDB, "en", []string{"keeps its sessions in the database"}, []string{`name="token"`}, 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.h.do(t, "GET", "/admin/signin", "", map[string]string{"Accept-Language": tt.lang}, nil)
			if r.status != tt.wantCode || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %q", r.status, r.header.Get("Cache-Control"))
			}
			for _, s := range tt.want {
				if !strings.Contains(r.body, s) {
					t.Errorf("missing %q in %.600s", s, r.body)
				}
			}
			for _, s := range tt.wantNot {
				if strings.Contains(r.body, s) {
					t.Errorf("unexpected %q", s)
				}
			}
		})
	}
	// A session of the admin token ends with the token: a server without
	// one (on the same database) does not take it.
	tc, _ := signIn(t, tokenOnly.srv, testAdminToken)
	adminCookie := consoleCookieOf(t, tc, tokenOnly.srv)
	tokenGone := newHarness(t, func(o *Options) {
		o.Operators, o.Audit, o.AdminToken = operatorsOf(t, tokenOnlyDB), audit.New(tokenOnlyDB), ""
	})
	req, _ := http.NewRequest("GET", tokenGone.srv.URL+"/admin/signin", nil)
	req.AddCookie(adminCookie)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(b), "Signed in as") {
			t.Fatal("an admin session outlived ADMIN_TOKEN")
		}
	}
	// Without a token, the token field signs nobody in; the operator does.
	resp, _ := postForm(t, noRedirects(), withOperator.srv.URL+"/admin/signin", url.Values{"token": {testAdminToken}}, nil)
	if resp.StatusCode != 401 {
		t.Fatalf("token with ADMIN_TOKEN unset: %d", resp.StatusCode)
	}
	c, csrf := signInWith(t, withOperator.srv, url.Values{"name": {"alice"}, "password": {"correct horse battery"}})
	resp, err := c.Get(withOperator.srv.URL + "/admin/signin")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, s := range []string{"Signed in as alice", `href="/admin/orders"`, `href="/admin/audit"`, `action="/admin/signout"`, csrf} {
		if !strings.Contains(string(b), s) {
			t.Errorf("signed-in frame lacks %q", s)
		}
	}
	// An unknown console path is a console page, in words.
	for _, m := range []string{"GET", "POST"} {
		r := withOperator.do(t, m, "/admin/nope", "", map[string]string{"Accept-Language": "ko"}, nil)
		if r.status != 404 || !strings.Contains(r.body, "<h1>찾을 수 없음</h1>") || !strings.Contains(r.header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s /admin/nope: %d %.300s", m, r.status, r.body)
		}
	}
	// The stylesheet is served.
	css := withOperator.do(t, "GET", withOperator.web.assets.url("console.css"), "", nil, nil)
	if css.status != 200 || !strings.Contains(css.body, ".skip") {
		t.Fatalf("console.css: %d", css.status)
	}
}

// TestConsoleAdminSessionEndsWithItsToken: a session opened with the
// admin token lasts only as long as the server has that token: a server
// restarted on the same database with another ADMIN_TOKEN (or none)
// refuses it; with the same token it keeps it.
func TestConsoleAdminSessionEndsWithItsToken(t *testing.T) {
	t.Parallel()
	h, db := newConsoleHarness(t, nil)
	c, _ := signIn(t, h.srv, testAdminToken)
	ck := consoleCookieOf(t, c, h.srv)
	ops := operatorsOf(t, db)
	restarted := func(token string) *Server {
		return newHarness(t, func(o *Options) {
			o.Operators, o.Audit, o.AdminToken = ops, audit.New(db), token
		}).web
	}
	page := func(s *Server) string {
		r := httptest.NewRequest("GET", "/admin/rooms", nil)
		r.AddCookie(ck)
		w := httptest.NewRecorder()
		s.console.Page(func(w http.ResponseWriter, r *http.Request, sess console.Session) {
			fmt.Fprintf(w, "signed in as %s", sess.Operator)
		})(w, r)
		if w.Code == 303 {
			return "→ " + w.Header().Get("Location")
		}
		return w.Body.String()
	}
	for _, tt := range []struct {
		name, token, want string
	}{
		{"the same token", testAdminToken, "signed in as admin"},
		{"another token", strings.Repeat("b", 40), "→ /admin/signin?next=%2Fadmin%2Frooms"},
		{"no token", "", "→ /admin/signin?next=%2Fadmin%2Frooms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := page(restarted(tt.token)); got != tt.want {
				t.Fatalf("%q, want %q", got, tt.want)
			}
		})
	}
	// A session stored as a bare "admin" (before the token's fingerprint)
	// is refused too.
	secret, _, err := ops.StartSession(context.Background(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	ck = &http.Cookie{Name: console.SessionCookie, Value: secret}
	if got := page(h.web); got != "→ /admin/signin?next=%2Fadmin%2Frooms" {
		t.Fatalf("a bare admin session: %q", got)
	}
}

// operatorsOf is the operator store of db, which a console harness's
// server signs in with.
func operatorsOf(t *testing.T, db *store.DB) *operator.Store {
	t.Helper()
	ops, err := operator.New(db, testOperators)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// adminSessionOperator is the operator a session opened with token
// stores: "admin:" and the first 8 hex digits of the SHA-256 of the
// token's SHA-256.
func adminSessionOperator(token string) string {
	d := sha256.Sum256(digest(token))
	return "admin:" + hex.EncodeToString(d[:4])
}

// countingBody counts the bytes read from it.
type countingBody struct {
	r    io.Reader
	read int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += int64(n)
	return n, err
}

func (c *countingBody) Close() error { return nil }

// TestConsoleUploadNeedsSession: a form with uploads is read beyond
// console.FormBodyMax only for a signed-in session; a request without one is
// refused having read at most about console.FormBodyMax of its body, and the
// CSRF token is still checked.
func TestConsoleUploadNeedsSession(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	u, _ := url.Parse(rc.srv.URL + "/admin/rooms/" + rc.room + "/branding")
	var cookie *http.Cookie
	for _, c := range rc.c.Jar.Cookies(u) {
		if c.Name == console.SessionCookie {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatal("no session cookie")
	}
	const limit = 3 << 20
	tests := []struct {
		name    string
		cookie  bool
		csrf    string
		size    int
		status  int
		maxRead int64 // bytes of the body read, at most
		handled bool
	}{
		{"anonymous, large form", false, "", 2900 << 10, http.StatusRequestEntityTooLarge, console.FormBodyMax + 8<<10, false},
		{"anonymous, small form", false, "", 1 << 10, http.StatusForbidden, console.FormBodyMax, false},
		{"signed in, large form", true, rc.csrf, 2900 << 10, http.StatusNoContent, limit, true},
		{"signed in, no CSRF token", true, "wrong", 2900 << 10, http.StatusForbidden, limit, false},
		{"signed in, beyond the limit", true, rc.csrf, limit + 1<<10, http.StatusRequestEntityTooLarge, limit + 8<<10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var form bytes.Buffer
			mw := multipart.NewWriter(&form)
			mw.WriteField("csrf", tt.csrf)
			fw, _ := mw.CreateFormFile("logo", "logo.png")
			fw.Write(bytes.Repeat([]byte{0x89}, tt.size))
			mw.Close()
			body := &countingBody{r: &form}
			req := httptest.NewRequest("POST", "/admin/rooms/"+rc.room+"/branding", nil)
			req.Body = body
			req.Header.Set("Content-Type", mw.FormDataContentType())
			if tt.cookie {
				req.AddCookie(&http.Cookie{Name: console.SessionCookie, Value: cookie.Value})
			}
			handled := false
			rec := httptest.NewRecorder()
			rc.web.console.ChangeUpTo(limit, func(w http.ResponseWriter, r *http.Request, _ console.Session) {
				handled = true
				w.WriteHeader(http.StatusNoContent)
			}, nil)(rec, req)
			if rec.Code != tt.status || handled != tt.handled {
				t.Errorf("%d, handled %v; want %d, %v", rec.Code, handled, tt.status, tt.handled)
			}
			if body.read > tt.maxRead {
				t.Errorf("read %d bytes of the body, want at most %d", body.read, tt.maxRead)
			}
		})
	}
}
