package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"waitingroom/server/operator"
)

// countingOperators counts the password checks (Authenticate) under way
// and the most seen at once.
type countingOperators struct {
	Operators
	calls, now, most atomic.Int64
}

func (c *countingOperators) Authenticate(ctx context.Context, name, password string) error {
	c.calls.Add(1)
	n := c.now.Add(1)
	for m := c.most.Load(); n > m && !c.most.CompareAndSwap(m, n); m = c.most.Load() {
	}
	defer c.now.Add(-1)
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
		ops = &countingOperators{Operators: o.Operators}
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
	codes, retry, bodies = make([]int, len(clients)), make([]string, len(clients)), make([]string, len(clients))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, client := range clients {
		wg.Go(func() {
			<-start
			req, _ := http.NewRequest("POST", h.srv.URL+"/admin/signin", strings.NewReader(f.Encode()))
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
// many clients runs at most signinHashes password checks at once; the
// rest are refused at once with 429, a console page in the operator's
// language.
func TestConsolePasswordChecksAreBounded(t *testing.T) {
	h, ops := newCountingHarness(t, true)
	clients := make([]string, 24)
	for i := range clients {
		clients[i] = fmt.Sprintf("198.51.100.%d", i+1)
	}
	codes, retry, bodies := burst(t, h, clients, url.Values{"name": {"alice"}, "password": {"wrong password!"}})
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
	if most := ops.most.Load(); most > signinHashes || most < 1 {
		t.Fatalf("%d password checks at once, want 1 to %d", most, signinHashes)
	}
	if wrong == 0 || busy == 0 || int(ops.calls.Load()) != wrong {
		t.Fatalf("%d wrong, %d busy, %d checks", wrong, busy, ops.calls.Load())
	}
	if n := len(h.web.hashing); n != 0 {
		t.Fatalf("%d slots still held", n)
	}
	// Every slot taken: refused without a check, and not counted as a
	// failure of the client, who may try again once a slot is free.
	for range signinHashes {
		h.web.hashing <- struct{}{}
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
	for range signinHashes {
		<-h.web.hashing
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
	h.web.hashing = make(chan struct{}, 100) // here, only the client's count may refuse
	clients := make([]string, 3*adminFailures)
	for i := range clients {
		clients[i] = "192.0.2.77"
	}
	codes, _, bodies := burst(t, h, clients, url.Values{"name": {"alice"}, "password": {"wrong password!"}})
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
