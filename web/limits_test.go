package web

import (
	"context"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"waitingroom/web/sse"
)

// TestIPLimiterTake: concurrent takes never pass more than the burst; a
// token given back is taken again, and giving back never lifts a bucket
// above its burst.
func TestIPLimiterTake(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		burst, concurrent   int
		giveBack, wantAfter int
	}{
		{"a crowd of 50 on a burst of 5", 5, 50, 0, 0},
		{"one given back is one more", 5, 50, 1, 1},
		{"all given back are the burst again", 5, 5, 5, 5},
		{"one taken, given back thrice: still the burst", 5, 1, 3, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newIPLimiter(0.001, tc.burst, nil)
			var passed atomic.Int64
			var backs []func()
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range tc.concurrent {
				wg.Go(func() {
					if ok, back := l.take("203.0.113.7"); ok {
						passed.Add(1)
						mu.Lock()
						backs = append(backs, back)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if want := int64(min(tc.burst, tc.concurrent)); passed.Load() != want {
				t.Fatalf("%d of %d concurrent takes passed, want %d", passed.Load(), tc.concurrent, want)
			}
			for i := range tc.giveBack {
				backs[i%len(backs)]()
			}
			after := 0
			for range tc.burst + 3 {
				if ok, _ := l.take("203.0.113.7"); ok {
					after++
				}
			}
			if after != tc.wantAfter {
				t.Fatalf("%d takes passed after %d given back, want %d", after, tc.giveBack, tc.wantAfter)
			}
		})
	}
}

var loopbackProxy = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}

// TestIPv6NetworkSharesTheEnterLimit: the addresses of one /64 are one
// client for the enter limiter, however many of them a client uses, while
// neighbours in IPv4 and other /64s keep their own buckets.
func TestIPv6NetworkSharesTheEnterLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) {
		o.EnterRatePerIP, o.EnterBurstPerIP = 0.001, 3
		o.TrustedProxies = loopbackProxy
	})
	enter := func(client string) int {
		return h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", map[string]string{"X-Forwarded-For": client}, nil).status
	}
	for i := 1; i <= 50; i++ {
		want := 200
		if i > 3 {
			want = 429
		}
		if got := enter("2001:db8:a:b::" + strconv.FormatInt(int64(i), 16)); got != want {
			t.Fatalf("enter %d from one /64: %d, want %d", i, got, want)
		}
	}
	for _, other := range []string{"2001:db8:a:c::1", "203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4"} {
		if got := enter(other); got != 200 {
			t.Fatalf("enter from %s, another client: %d", other, got)
		}
	}
	if st, _ := h.eng.Stats(context.Background(), h.room); st.Issued != 8 {
		t.Fatalf("%d tickets, want 3 from the /64 and 5 from the others", st.Issued)
	}
}

// TestIPv6NetworkSharesTheSSECap: the SSE cap per client counts a /64 as
// one client.
func TestIPv6NetworkSharesTheSSECap(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) {
		o.TrustedProxies = loopbackProxy
		o.Hub = newHub(o.Queue.(sse.Source), sse.Options{MaxPerIP: 2}, o.Metrics, o.Log)
		t.Cleanup(o.Hub.Close)
	})
	open := func(client string) int {
		req, _ := http.NewRequest("GET", h.srv.URL+"/r/"+h.room+"/events", nil)
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp.StatusCode
	}
	for i, c := range []string{"2001:db8:a:b::1", "2001:db8:a:b::2", "2001:db8:a:b::3", "2001:db8:a:b:ffff::9"} {
		want := 200
		if i >= 2 {
			want = 429
		}
		if got := open(c); got != want {
			t.Fatalf("stream %d from one /64 (%s): %d, want %d", i+1, c, got, want)
		}
	}
	if got := open("2001:db8:a:c::1"); got != 200 {
		t.Fatalf("stream from another /64: %d", got)
	}
}
