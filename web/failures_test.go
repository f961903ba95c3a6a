package web

import (
	"strconv"
	"testing"
	"time"
)

// TestAdminAuthenticationIsThrottled: a client network that failed 10
// times within a minute gets 429 with Retry-After, even with the right
// token, while other clients are unaffected.
func TestAdminAuthenticationIsThrottled(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.TrustedProxies = loopbackProxy })
	path := "/api/admin/rooms/" + h.room
	try := func(client, token string) reply {
		return h.do(t, "GET", path, "", map[string]string{"X-Forwarded-For": client, "Authorization": "Bearer " + token}, nil)
	}
	for i := 1; i <= adminFailures; i++ {
		// Each guess from another address of the same /64.
		if r := try("2001:db8:5::"+strconv.Itoa(i), "guess-"+strconv.Itoa(i)); r.status != 401 {
			t.Fatalf("failure %d: %d %s", i, r.status, r.body)
		}
	}
	for _, token := range []string{"guess-11", testAdminToken} {
		r := try("2001:db8:5::99", token)
		secs, err := strconv.Atoi(r.header.Get("Retry-After"))
		if r.status != 429 || err != nil || secs < 50 || secs > 60 {
			t.Fatalf("after 10 failures (token %q): %d Retry-After %q %s, want 429 and about 60 s", token, r.status, r.header.Get("Retry-After"), r.body)
		}
	}
	if r := try("203.0.113.9", testAdminToken); r.status != 200 {
		t.Fatalf("another client with the right token: %d %s", r.status, r.body)
	}
}

func TestFailuresSlideOverTheWindow(t *testing.T) {
	t.Parallel()
	f := newFailures(3, time.Minute)
	t0 := time.Now()
	for i := range 3 {
		if w := f.blocked("a", t0.Add(time.Duration(i)*time.Second)); w != 0 {
			t.Fatalf("blocked before failure %d", i+1)
		}
		f.fail("a", t0.Add(time.Duration(i)*time.Second))
	}
	if w := f.blocked("a", t0.Add(30*time.Second)); w != 30*time.Second {
		t.Fatalf("after 3 failures: wait %v, want 30s (until the first ages out)", w)
	}
	if w := f.blocked("b", t0.Add(30*time.Second)); w != 0 {
		t.Fatal("another client is blocked")
	}
	if w := f.blocked("a", t0.Add(time.Minute)); w != 0 {
		t.Fatalf("a minute after the first failure: wait %v, want 0", w)
	}
	f.fail("a", t0.Add(time.Minute))
	if w := f.blocked("a", t0.Add(time.Minute)); w != time.Second {
		t.Fatalf("a fourth failure: wait %v, want 1s (until the second ages out)", w)
	}
	if f.blocked("a", t0.Add(10*time.Minute)); len(f.byKey) != 0 {
		t.Fatalf("quiet clients not forgotten: %v", f.byKey)
	}
}
