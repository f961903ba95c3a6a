package adapt

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"waitingroom/server/room"
)

// TestDecideOnHealth: a load of 1 or more from the room's healthURL cuts
// the rate, even with too few orders to judge by; under 1 it changes
// nothing; a figure that did not come (HasLoad false) is no cut.
func TestDecideOnHealth(t *testing.T) {
	set := room.Adapt{Adaptive: true, MinRate: 10, MaxRate: 200, TargetP95Ms: 300, MaxErrorRate: 0.05}
	fast := Signal{Samples: 500, P95: 50 * time.Millisecond}
	with := func(s Signal, load float64, has bool) Signal { s.Load, s.HasLoad = load, has; return s }
	for _, tt := range []struct {
		name   string
		sig    Signal
		rate   float64
		reason string
	}{
		{"overloaded: a cut", with(fast, 1, true), 70, ReasonHealth},
		{"overloaded, few orders: a cut all the same", with(Signal{}, 3.5, true), 70, ReasonHealth},
		{"overloaded and slow: health names it", with(Signal{Samples: 500, P95: time.Second}, 1.2, true), 70, ReasonHealth},
		{"under 1: a step", with(fast, 0.99, true), 106, ReasonIncrease}, // the first climb: ×1.05 + maxRate/200
		{"a stale figure is none", with(fast, 5, false), 106, ReasonIncrease},
		{"few orders, not overloaded: frozen", with(Signal{Samples: 2}, 0.5, true), 100, ReasonNoSignal},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(Input{Rate: 100, Waiting: 1000, Settings: set, Signal: tt.sig, SignalOK: true}, DefaultParams())
			if d.Rate != tt.rate || d.Reason != tt.reason {
				t.Fatalf("%+v, want %g %s", d, tt.rate, tt.reason)
			}
		})
	}
}

// TestReaderTakesTheLatestLoad: the window's latest poll gives Load and
// HasLoad; a failed latest poll is no figure, whatever came before.
func TestReaderTakesTheLatestLoad(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		polls []map[string]string // oldest first, the last complete seconds
		load  float64
		has   bool
	}{
		{"none", nil, 0, false},
		{"one answer", []map[string]string{{fLoad: "0.4"}}, 0.4, true},
		{"the latest answer", []map[string]string{{fLoad: "2"}, {fLoad: "0.5"}}, 0.5, true},
		{"answered then failed", []map[string]string{{fLoad: "0.5"}, {fNoLoad: "1"}}, 0, false},
		{"failed then answered", []map[string]string{{fNoLoad: "1"}, {fLoad: "1.5"}, {}}, 1.5, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, name, rdb := adaptiveRoom(t, 50, 0)
			ns := testNamespace(t)
			now := time.Now().Truncate(time.Second)
			for i, m := range tt.polls {
				if len(m) == 0 {
					continue
				}
				k := signalKey(ns, name, now.Unix()-int64(len(tt.polls)-i))
				if err := rdb.HSet(ctx, k, m).Err(); err != nil {
					t.Fatal(err)
				}
				rdb.Expire(ctx, k, keepSeconds*time.Second)
			}
			rd := NewReader(rdb, ns)
			rd.clk = at(now.Add(Landed)) // the second before now has landed
			sig, err := rd.Read(ctx, name, 5)
			if err != nil || sig.Load != tt.load || sig.HasLoad != tt.has {
				t.Fatalf("load %g has %v (%v), want %g %v", sig.Load, sig.HasLoad, err, tt.load, tt.has)
			}
		})
	}
}

// stubProbe answers every poll with load, or err; it counts the polls.
type stubProbe struct {
	load float64
	err  error

	mu   sync.Mutex
	urls []string
}

func (p *stubProbe) Load(_ context.Context, u string) (float64, error) {
	p.mu.Lock()
	p.urls = append(p.urls, u)
	p.mu.Unlock()
	return p.load, p.err
}

func (p *stubProbe) polls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.urls)
}

// TestHealthPollDecides: the healthURL's figure, polled by one instance
// per interval whatever their number, reaches the controller: an
// overloaded shop is cut, a healthy one stepped up, and a healthURL that
// gives no figure freezes the rate, with a warning that never shows the
// URL's query.
func TestHealthPollDecides(t *testing.T) {
	const secret = "token=s3cret"
	for _, tt := range []struct {
		name   string
		probe  *stubProbe
		rate   float64
		reason string
	}{
		{"overloaded", &stubProbe{load: 1.25}, 70, ReasonHealth},
		{"healthy", &stubProbe{load: 0.2}, 106, ReasonIncrease}, // the first climb: ×1.05 + maxRate/200
		{"no answer", &stubProbe{err: errors.New("health: get: connection refused")}, 100, ReasonNoSignal},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			e, name, rdb := adaptiveRoom(t, 100, 1000)
			set, err := e.Room(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			set.HealthURL = "https://shop.example/health?" + secret
			if err := e.SaveRoom(ctx, name, set); err != nil {
				t.Fatal(err)
			}
			healthy(t, rdb, name, 20*time.Millisecond, time.Now()) // the orders alone would step up
			ns := testNamespace(t)
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			a := NewHealthPoller(e, tt.probe, rdb, ns, log)
			b := NewHealthPoller(e, tt.probe, rdb, ns, log)
			var wg sync.WaitGroup
			for range 3 { // two instances, each a few times in the same interval
				wg.Go(func() { a.Tick(ctx) })
				wg.Go(func() { b.Tick(ctx) })
			}
			wg.Wait()
			a.wg.Wait()
			b.wg.Wait()
			if n := tt.probe.polls(); n != 1 || tt.probe.urls[0] != set.HealthURL {
				t.Fatalf("%d polls of %v in one interval, want 1 of %s", n, tt.probe.urls, set.HealthURL)
			}
			rd := NewReader(rdb, ns)
			rd.clk = at(time.Now().Add(time.Second + Landed)) // the poll's second, complete and landed
			NewController(e, rd, DefaultParams(), quiet, nil).Tick(ctx)
			if got, st := rateOf(t, e, name); got != tt.rate || st.LastReason != tt.reason {
				t.Fatalf("rate %g after %s, want %g after %s", got, st.LastReason, tt.rate, tt.reason)
			}
			if tt.probe.err != nil {
				if !strings.Contains(logs.String(), "https://shop.example/health") || strings.Contains(logs.String(), "s3cret") {
					t.Fatalf("warning %q: want the URL's host and path, never its query", logs.String())
				}
			}
		})
	}
}
