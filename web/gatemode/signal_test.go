package gatemode

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/adapt"
	"waitingroom/server/servicetest"
)

// signalNS is the Redis namespace of the signal tests' recorders: their
// keys never meet another test's.
const signalNS = "wr:h15sig-test"

// shopStandIn answers /shop/fast at once, /shop/slow after slow,
// /shop/down with 502, and /shop/hang only after the client gave up.
func shopStandIn(t *testing.T, slow time.Duration) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/shop/slow":
			time.Sleep(slow)
		case "/shop/down":
			w.WriteHeader(http.StatusBadGateway)
			return
		case "/shop/hang":
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// closedPort is an origin that refuses connections.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	return "http://" + ln.Addr().String()
}

// TestProxyFeedsTheSignal: the shop's answers to the protected requests
// of live sessions reach the room's signal in Redis as the order path's
// do: each a sample, its time to headers in the p95, and 5xx, timeouts
// and connection errors as errors. Requests that no live session let
// through, paths no room protects, and rooms that are not adaptive are
// not counted.
func TestProxyFeedsTheSignal(t *testing.T) {
	const slow = 200 * time.Millisecond
	shop := shopStandIn(t, slow)
	rdb := servicetest.Redis(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	type sent struct {
		path    string
		n       int
		session bool
		status  int
	}
	for _, tt := range []struct {
		name                    string
		origin                  string
		adaptive                bool
		sent                    []sent
		wantSamples, wantErrors int64
		minP95, maxP95          time.Duration
	}{
		{"a shop, fast, slow, failing and hanging", shop, true, []sent{
			{"/shop/fast", 20, true, 200},
			{"/shop/slow", 4, true, 200}, // the p95: past 95% of the 27
			{"/shop/down", 2, true, http.StatusBadGateway},
			{"/shop/hang", 1, true, http.StatusBadGateway}, // past the wait for headers
			{"/shop/fast", 2, false, http.StatusSeeOther},  // no session: sent to the room
			{"/open", 3, false, 200},                       // not protected
		}, 27, 3, slow, 2 * slow},
		{"a shop that refuses connections", closedPort(t), true, []sent{
			{"/shop/fast", 3, true, http.StatusBadGateway},
		}, 3, 3, 0, time.Second},
		{"a room that is not adaptive", shop, false, []sent{
			{"/shop/fast", 3, true, 200},
			{"/shop/down", 1, true, http.StatusBadGateway},
		}, 0, 0, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// The requests are counted in one second of a fake clock, and
			// read once that second has landed.
			fc := clockwork.NewFakeClockAt(time.Now())
			rec := adapt.NewRecorder(rdb, signalNS, "test", nil, log).WithClock(fc)
			pr := newProxyRig(t, tt.origin, func(o *ProxyOptions) {
				o.Signal = rec
				o.Transport = &http.Transport{ResponseHeaderTimeout: 500 * time.Millisecond}
			})
			name := pr.gateRoom(t, false, "/shop/")
			if tt.adaptive {
				rec.Track([]string{name})
			} else {
				rec.Track(nil) // the controller's adaptive rooms: none
			}
			cookie := pr.session(t, name)
			for _, s := range tt.sent {
				for range s.n {
					var r proxied
					if s.session {
						r = pr.do(t, "GET", s.path, "", nil, cookie)
					} else {
						r = pr.do(t, "GET", s.path, "", nil)
					}
					if r.status != s.status {
						t.Fatalf("GET %s: %d, want %d", s.path, r.status, s.status)
					}
				}
			}
			if err := rec.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			landed := clockwork.NewFakeClockAt(fc.Now().Truncate(time.Second).Add(time.Second + adapt.Landed))
			sig, err := adapt.NewReader(rdb, signalNS).WithClock(landed).Read(context.Background(), name, adapt.MaxWindow)
			if err != nil {
				t.Fatal(err)
			}
			if sig.Samples != tt.wantSamples || sig.Errors != tt.wantErrors {
				t.Fatalf("signal %d samples, %d errors; want %d, %d (%+v)", sig.Samples, sig.Errors, tt.wantSamples, tt.wantErrors, sig)
			}
			if sig.P95 < tt.minP95 || sig.P95 > tt.maxP95 {
				t.Fatalf("p95 %v, want in [%v, %v]", sig.P95, tt.minP95, tt.maxP95)
			}
			if tt.wantErrors > 0 && sig.Failed[ShopUnavailable] != tt.wantErrors {
				t.Fatalf("failures %v, want %d unavailable", sig.Failed, tt.wantErrors)
			}
		})
	}
}
