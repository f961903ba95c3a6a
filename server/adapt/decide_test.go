package adapt

import (
	"testing"
	"time"

	"waitingroom/server/histogram"
	"waitingroom/server/room"
)

// seconds is a signal of per-second seconds, oldest first: each n orders
// that took took (errs of them failed).
func seconds(secs ...struct {
	n, errs int64
	took    time.Duration
}) Signal {
	s := Signal{Seconds: len(secs), Secs: make([]Second, len(secs))}
	for i, sec := range secs {
		s.Secs[i] = Second{Samples: sec.n, Errors: sec.errs, SumUs: sec.n * sec.took.Microseconds(), SumN: sec.n}
		s.Secs[i].Hist[histogram.Bucket(Bounds[:], sec.took)] = sec.n
	}
	return s.Last(len(secs))
}

type sec = struct {
	n, errs int64
	took    time.Duration
}

func TestDecide(t *testing.T) {
	ms := time.Millisecond
	set := room.Adapt{Adaptive: true, MinRate: 10, MaxRate: 200, TargetP95Ms: 300, MaxErrorRate: 0.05}
	zero := room.Adapt{MinRate: 0, MaxRate: 40, TargetP95Ms: 300, MaxErrorRate: 0.05}
	healthy := Signal{Seconds: 5, Samples: 200, P95: 100 * ms}
	slow := Signal{Seconds: 5, Samples: 200, P95: 400 * ms}
	failing := Signal{Seconds: 5, Samples: 200, Errors: 20, P95: 50 * ms}
	// A shop at its capacity, 100 orders a second, with a growing queue:
	// even the fastest orders of the newest second waited.
	saturated := seconds(sec{100, 0, 100 * ms}, sec{100, 0, 200 * ms}, sec{100, 0, 700 * ms})
	queueing := seconds(sec{100, 0, 100 * ms}, sec{100, 0, 150 * ms}, sec{100, 0, 250 * ms})
	// A first climb at 120/s whose shop completed a flat 100 a second,
	// their mean latency up from 100 to 110 ms: a plateau.
	plateau := seconds(sec{100, 0, 100 * ms}, sec{99, 0, 105 * ms}, sec{100, 0, 110 * ms})
	following := seconds(sec{90, 0, 100 * ms}, sec{100, 0, 105 * ms}, sec{110, 0, 110 * ms})
	unhurried := seconds(sec{100, 0, 90 * ms}, sec{100, 0, 90 * ms}, sec{100, 0, 90 * ms})
	few := seconds(sec{40, 0, 100 * ms}, sec{20, 0, 105 * ms}, sec{20, 0, 110 * ms})
	// The plateau's seconds, but one summed only in part (an instance of
	// an older release wrote some of its orders): no mean, no plateau.
	upgrading := plateau
	upgrading.Secs = append([]Second(nil), plateau.Secs...)
	upgrading.Secs[2].SumN -= 10
	// straggle adds n orders that took took to the newest second of s.
	straggle := func(s Signal, n int64, took time.Duration) Signal {
		s.Secs = append([]Second(nil), s.Secs...)
		last := &s.Secs[len(s.Secs)-1]
		last.Samples += n
		last.SumN += n
		last.SumUs += n * took.Microseconds()
		last.Hist[histogram.Bucket(Bounds[:], took)] += n
		return s.Last(len(s.Secs))
	}
	// The capacity halved under a rate of 100: the shop completes a flat
	// 50 a second, most of them still fast, the last few over the target.
	halved := straggle(seconds(sec{100, 0, 100 * ms}, sec{50, 0, 100 * ms}, sec{45, 0, 100 * ms}), 5, 2*time.Second)
	// At the floor after that cut: the backlog has drained, the shop
	// completes 20 of its 30 and only its last few orders waited.
	drained := straggle(seconds(sec{30, 0, 100 * ms}, sec{30, 0, 100 * ms}, sec{18, 0, 100 * ms}), 2, 2*time.Second)
	p := DefaultParams() // first climb: ×1.05 + 200/200; cuts keep at most 92%
	tests := []struct {
		name       string
		in         Input
		wantRate   float64
		wantReason string
		wantKnee   float64
	}{
		{"healthy, long line: a step up", Input{Rate: 50, Waiting: 1000, Signal: healthy, SignalOK: true}, 53.5, ReasonIncrease, 0},
		{"healthy, short line: hold", Input{Rate: 50, Waiting: 99, Signal: healthy, SignalOK: true}, 50, ReasonShortLine, 0},
		{"healthy, empty line: hold", Input{Rate: 50, Signal: healthy, SignalOK: true}, 50, ReasonShortLine, 0},
		{"a step never passes maxRate", Input{Rate: 195, Waiting: 1000, Signal: healthy, SignalOK: true}, 200, ReasonIncrease, 0},
		{"at maxRate: hold", Input{Rate: 200, Waiting: 1000, Signal: healthy, SignalOK: true}, 200, ReasonAtMax, 0},
		{"a queue forming slows the first climb", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 200, P95: 120 * ms}, Base: 100 * ms, SignalOK: true},
			51.195, ReasonIncrease, 0},
		{"a queue formed: the slowest climb", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 200, P95: 150 * ms}, Base: 100 * ms, SignalOK: true},
			50.25, ReasonIncrease, 0},
		{"the p95 near the target: hold", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 200, P95: 250 * ms}, Base: 100 * ms, SignalOK: true},
			50, ReasonNear, 0},
		{"under a known knee: back near it at once", Input{Rate: 50, Waiting: 1000, Signal: healthy, SignalOK: true, Knee: 100}, 95, ReasonIncrease, 100},
		{"under a known knee: back to Near×knee at once", Input{Rate: 20, Waiting: 1000, Signal: healthy, SignalOK: true, Knee: 100}, 95, ReasonIncrease, 100},
		{"a capacity drop, completions flat under the rate before the queue shows: a cut under them, their knee",
			Input{Rate: 100, Waiting: 1000, Signal: halved, SignalOK: true, Base: 100 * ms}, 10, ReasonLatency, 50},
		{"at the floor, the backlog drained: back to Near×knee", Input{Rate: 10, Waiting: 1000, Signal: drained, SignalOK: true, Base: 100 * ms,
			Knee: 30, SinceCut: 5 * time.Second}, 28.5, ReasonIncrease, 30},
		{"at the floor, the shop still at its knee: a hold", Input{Rate: 10, Waiting: 1000, Signal: straggle(seconds(sec{30, 0, 100 * ms},
			sec{30, 0, 100 * ms}, sec{28, 0, 100 * ms}), 2, 2*time.Second), SignalOK: true, Base: 100 * ms, Knee: 30, SinceCut: 5 * time.Second},
			10, ReasonAtMin, 30},
		{"at the floor, the backlog drained, but the cut settling: a hold", Input{Rate: 10, Waiting: 1000, Signal: drained, SignalOK: true,
			Base: 100 * ms, Knee: 30, SinceCut: time.Second}, 10, ReasonSettle, 30},
		{"at Near×knee, rounded: a probe, not the same jump again", Input{Rate: 486.305, Waiting: 1000, Signal: healthy, SignalOK: true, Knee: 511.9,
			Settings: room.Adapt{MinRate: 5, MaxRate: 3000, TargetP95Ms: 300, MaxErrorRate: 0.05}}, 488.737, ReasonIncrease, 511.9},
		{"at a known knee: a probe", Input{Rate: 100, Waiting: 1000, Signal: healthy, SignalOK: true, Knee: 100}, 101, ReasonIncrease, 100},
		{"healthy over a known knee: faster", Input{Rate: 110, Waiting: 1000, Signal: healthy, SignalOK: true, Knee: 100}, 112.2, ReasonIncrease, 100},
		{"but no faster than the first climb (and the knee, 1.5x beaten, is forgotten)", Input{Rate: 150, Waiting: 1000, Signal: healthy, SignalOK: true,
			Knee: 100}, 157.5, ReasonIncrease, 0},
		{"a cut settles", Input{Rate: 50, Waiting: 1000, Signal: healthy, SignalOK: true, SinceCut: time.Second}, 50, ReasonSettle, 0},
		{"p95 over the target: a cut", Input{Rate: 50, Waiting: 1000, Signal: slow, SignalOK: true}, 46, ReasonLatency, 50},
		{"a cut drains the wait over the target", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 200, P95: 1300 * ms}, SignalOK: true},
			25, ReasonLatency, 50},
		{"a cut settling holds", Input{Rate: 50, Waiting: 1000, Signal: slow, SignalOK: true, SinceCut: time.Second, Knee: 60}, 50, ReasonSettle, 60},
		{"p95 at the target is healthy", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 200, P95: 300 * ms}, SignalOK: true}, 53.5, ReasonIncrease, 0},
		{"errors over the budget: a cut", Input{Rate: 50, Waiting: 1000, Signal: failing, SignalOK: true}, 35, ReasonErrors, 50},
		{"errors at the budget are healthy", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 200, Errors: 10, P95: 50 * ms}, SignalOK: true},
			53.5, ReasonIncrease, 0},
		{"errors win over latency", Input{Rate: 50, Signal: Signal{Samples: 200, Errors: 50, P95: time.Second}, SignalOK: true}, 35, ReasonErrors, 50},
		{"a cut with a short line", Input{Rate: 50, Waiting: 0, Signal: slow, SignalOK: true}, 46, ReasonLatency, 50},
		{"a saturated second measures the knee: under it, and the loop's overshoot drained",
			Input{Rate: 200, Waiting: 1000, Signal: saturated, Base: 100 * ms, SignalOK: true}, 20, ReasonLatency, 100},
		{"a measured drop cuts while the last cut settles",
			Input{Rate: 200, Waiting: 1000, Signal: saturated, Base: 100 * ms, SignalOK: true, Knee: 200, SinceCut: time.Second}, 20, ReasonLatency, 100},
		{"under the knee, the backlog drains: hold",
			Input{Rate: 60, Waiting: 1000, Signal: saturated, Base: 100 * ms, SignalOK: true, Knee: 100}, 60, ReasonDrain, 100},
		{"a queue before the target: cut to the knee",
			Input{Rate: 130, Waiting: 1000, Signal: queueing, Base: 100 * ms, SignalOK: true}, 55, ReasonQueue, 100},
		{"a queue under the knee is no cut",
			Input{Rate: 90, Waiting: 1000, Signal: queueing, Base: 100 * ms, SignalOK: true}, 90, ReasonNear, 0},
		{"a cut never passes minRate", Input{Rate: 10.5, Waiting: 1000, Signal: slow, SignalOK: true}, 10, ReasonLatency, 10.5},
		{"at minRate: hold", Input{Rate: 10, Waiting: 1000, Signal: slow, SignalOK: true}, 10, ReasonAtMin, 10},
		{"no signal read: frozen", Input{Rate: 50, Waiting: 1000, Signal: healthy, Knee: 70}, 50, ReasonNoSignal, 70},
		{"no orders: frozen", Input{Rate: 50, Waiting: 1000, SignalOK: true}, 50, ReasonNoSignal, 0},
		{"too few orders: frozen, even slow", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 19, P95: time.Second}, SignalOK: true}, 50, ReasonNoSignal, 0},
		{"a low rate needs fewer orders", Input{Rate: 4, Waiting: 1000, Signal: Signal{Samples: 10, P95: 10 * ms}, SignalOK: true,
			Settings: room.Adapt{MinRate: 1, MaxRate: 40, TargetP95Ms: 300, MaxErrorRate: 0.05}}, 4.4, ReasonIncrease, 0},
		{"but never fewer than 3", Input{Rate: 0.5, Waiting: 1000, Signal: Signal{Samples: 2, P95: 10 * ms}, SignalOK: true, Settings: zero},
			0.5, ReasonNoSignal, 0},
		{"a saturated pool: hold", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 200, P95: 100 * ms, PoolWaits: 3, PoolUse: 0.95}, SignalOK: true},
			50, ReasonPool, 0},
		{"a full pool without waits steps", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 200, P95: 100 * ms, PoolUse: 1}, SignalOK: true},
			53.5, ReasonIncrease, 0},
		{"a saturated pool does not stop a cut", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 200, P95: 400 * ms, PoolWaits: 3, PoolUse: 1},
			SignalOK: true}, 46, ReasonLatency, 50},
		{"paused: hold", Input{Rate: 50, Waiting: 1000, Paused: true, Signal: healthy, SignalOK: true}, 50, ReasonPaused, 0},
		{"above maxRate: moved inside", Input{Rate: 500, Waiting: 1000, Signal: healthy, SignalOK: true}, 200, ReasonBounds, 0},
		{"below minRate: moved inside, without signal", Input{Rate: 1, Waiting: 1000}, 10, ReasonBounds, 0},
		{"minRate 0: a cut below the smallest rate pauses", Input{Rate: 0.01, Waiting: 1000, Signal: Signal{Samples: 50, P95: time.Second}, SignalOK: true,
			Settings: zero}, 0, ReasonLatency, 0.01},
		{"minRate 0, at 0, a cut just now: shut", Input{Rate: 0, Waiting: 1000, SignalOK: true, Settings: zero, SinceCut: 3 * time.Second}, 0, ReasonAtMin, 0},
		{"minRate 0, at 0, the cut is old: a probe", Input{Rate: 0, Waiting: 1000, SignalOK: true, Settings: zero, SinceCut: 9 * time.Second},
			0.2, ReasonProbe, 0},
		{"a probe is a tenth of a known knee", Input{Rate: 0, Waiting: 1000, SignalOK: true, Settings: zero, SinceCut: 9 * time.Second, Knee: 30},
			3, ReasonProbe, 30},
		{"no probe without buyers", Input{Rate: 0, SignalOK: true, Settings: zero, SinceCut: 9 * time.Second}, 0, ReasonAtMin, 0},
		{"no probe without a signal read", Input{Rate: 0, Waiting: 1000, Settings: zero, SinceCut: 9 * time.Second}, 0, ReasonNoSignal, 0},
		{"no probe while paused", Input{Rate: 0, Waiting: 1000, Paused: true, SignalOK: true, Settings: zero, SinceCut: 9 * time.Second},
			0, ReasonPaused, 0},
		{"at 0, slow orders still in flight: shut", Input{Rate: 0, Waiting: 1000, SignalOK: true, Settings: zero, SinceCut: 9 * time.Second,
			Signal: Signal{Samples: 20, P95: 5 * time.Second}}, 0, ReasonAtMin, 0},
		{"minRate 0, at 0: healthy orders step up", Input{Rate: 0, Waiting: 1000, Signal: Signal{Samples: 5, P95: 10 * ms}, SignalOK: true,
			Settings: zero}, 0.2, ReasonIncrease, 0},
		{"a plateau in the first climb: a cut under the throughput, its knee", Input{Rate: 120, Waiting: 1000, Signal: plateau, SignalOK: true,
			Base: 100 * ms}, 70, ReasonQueue, 100},
		{"completions that follow the rate: no plateau", Input{Rate: 120, Waiting: 1000, Signal: following, SignalOK: true, Base: 100 * ms},
			120.6, ReasonIncrease, 0},
		{"flat, but the rate not 6% over it: no plateau", Input{Rate: 105.8, Waiting: 1000, Signal: plateau, SignalOK: true, Base: 100 * ms},
			106.329, ReasonIncrease, 0},
		{"a plateau while the line is short: a hold, not a cut", Input{Rate: 120, Waiting: 100, Signal: plateau, SignalOK: true, Base: 100 * ms},
			120, ReasonShortLine, 0},
		{"a plateau in a second summed in part (an upgrade): no plateau", Input{Rate: 120, Waiting: 1000, Signal: upgrading, SignalOK: true,
			Base: 100 * ms}, 120.6, ReasonIncrease, 0},
		{"flat without a queue (buyers who do not order; the mean does not rise): no plateau", Input{Rate: 150, Waiting: 1000, Signal: unhurried, SignalOK: true,
			Base: 100 * ms}, 158.5, ReasonIncrease, 0},
		{"too few orders to call flat: no plateau", Input{Rate: 30, Waiting: 1000, Signal: few, SignalOK: true, Base: 100 * ms,
			Settings: room.Adapt{MinRate: 1, MaxRate: 200, TargetP95Ms: 300, MaxErrorRate: 0.05}}, 30.15, ReasonIncrease, 0},
		{"a plateau past a known knee: the same cut", Input{Rate: 120, Waiting: 1000, Signal: plateau, SignalOK: true, Base: 100 * ms, Knee: 100},
			70, ReasonQueue, 100},
		{"a plateau under a known knee: back near the knee (the latency judges)", Input{Rate: 120, Waiting: 1000, Signal: plateau, SignalOK: true,
			Base: 100 * ms, Knee: 200}, 190, ReasonIncrease, 200},
		{"healthy over 1.25x a known knee: the knee is forgotten", Input{Rate: 126, Waiting: 1000, Signal: healthy, SignalOK: true, Knee: 100},
			130.536, ReasonIncrease, 0},
		{"healthy at 1.25x a known knee: the knee is kept", Input{Rate: 125, Waiting: 1000, Signal: healthy, SignalOK: true, Knee: 100},
			129.375, ReasonIncrease, 100},
		{"fractions are kept to three decimals", Input{Rate: 33.3333, Waiting: 1000, Signal: slow, SignalOK: true}, 30.667, ReasonLatency, 33.3333},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.in.Settings == (room.Adapt{}) {
				tt.in.Settings = set
			}
			got := Decide(tt.in, p)
			if got.Rate != tt.wantRate || got.Reason != tt.wantReason || got.Knee != tt.wantKnee {
				t.Fatalf("Decide = %+v, want rate %g reason %s knee %g", got, tt.wantRate, tt.wantReason, tt.wantKnee)
			}
			if got.Rate < tt.in.Settings.MinRate || got.Rate > tt.in.Settings.MaxRate {
				t.Fatalf("rate %g outside [%g, %g]", got.Rate, tt.in.Settings.MinRate, tt.in.Settings.MaxRate)
			}
			if got.Cut() != (got.Reason == ReasonLatency || got.Reason == ReasonErrors || got.Reason == ReasonQueue) {
				t.Fatalf("Cut() = %v for %s", got.Cut(), got.Reason)
			}
		})
	}
}
