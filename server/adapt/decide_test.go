package adapt

import (
	"testing"
	"time"

	"waitingroom/server/room"
)

func TestDecide(t *testing.T) {
	ms := time.Millisecond
	set := room.Adapt{Adaptive: true, MinRate: 10, MaxRate: 200, TargetP95Ms: 300, MaxErrorRate: 0.05}
	healthy := Signal{Seconds: 5, Samples: 200, P95: 100 * ms}
	slow := Signal{Seconds: 5, Samples: 200, P95: 400 * ms}
	failing := Signal{Seconds: 5, Samples: 200, Errors: 20, P95: 50 * ms}
	p := DefaultParams() // step 200/40 = 5, cut 0.7
	tests := []struct {
		name       string
		in         Input
		wantRate   float64
		wantReason string
	}{
		{"healthy, long line: a step up", Input{Rate: 50, Waiting: 1000, Signal: healthy, SignalOK: true}, 55, ReasonIncrease},
		{"healthy, short line: hold", Input{Rate: 50, Waiting: 99, Signal: healthy, SignalOK: true}, 50, ReasonShortLine},
		{"healthy, empty line: hold", Input{Rate: 50, Signal: healthy, SignalOK: true}, 50, ReasonShortLine},
		{"a step never passes maxRate", Input{Rate: 198, Waiting: 1000, Signal: healthy, SignalOK: true}, 200, ReasonIncrease},
		{"at maxRate: hold", Input{Rate: 200, Waiting: 1000, Signal: healthy, SignalOK: true}, 200, ReasonAtMax},
		{"p95 over the target: a cut", Input{Rate: 50, Waiting: 1000, Signal: slow, SignalOK: true}, 35, ReasonLatency},
		{"p95 at the target is healthy", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 200, P95: 300 * ms}, SignalOK: true}, 55, ReasonIncrease},
		{"errors over the budget: a cut", Input{Rate: 50, Waiting: 1000, Signal: failing, SignalOK: true}, 35, ReasonErrors},
		{"errors at the budget are healthy", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 200, Errors: 10, P95: 50 * ms}, SignalOK: true}, 55, ReasonIncrease},
		{"errors win over latency", Input{Rate: 50, Signal: Signal{Samples: 200, Errors: 50, P95: time.Second}, SignalOK: true}, 35, ReasonErrors},
		{"a cut with a short line", Input{Rate: 50, Waiting: 0, Signal: slow, SignalOK: true}, 35, ReasonLatency},
		{"a cut never passes minRate", Input{Rate: 12, Waiting: 1000, Signal: slow, SignalOK: true}, 10, ReasonLatency},
		{"at minRate: hold", Input{Rate: 10, Waiting: 1000, Signal: slow, SignalOK: true}, 10, ReasonAtMin},
		{"no signal read: frozen", Input{Rate: 50, Waiting: 1000, Signal: healthy}, 50, ReasonNoSignal},
		{"no orders: frozen", Input{Rate: 50, Waiting: 1000, SignalOK: true}, 50, ReasonNoSignal},
		{"too few orders: frozen, even slow", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 19, P95: time.Second}, SignalOK: true}, 50, ReasonNoSignal},
		{"a low rate needs fewer orders", Input{Rate: 4, Waiting: 1000, Signal: Signal{Samples: 10, P95: 10 * ms}, SignalOK: true,
			Settings: room.Adapt{MinRate: 1, MaxRate: 40, TargetP95Ms: 300, MaxErrorRate: 0.05}}, 5, ReasonIncrease},
		{"but never fewer than 3", Input{Rate: 0.5, Waiting: 1000, Signal: Signal{Samples: 2, P95: 10 * ms}, SignalOK: true,
			Settings: room.Adapt{MinRate: 0, MaxRate: 40, TargetP95Ms: 300, MaxErrorRate: 0.05}}, 0.5, ReasonNoSignal},
		{"a saturated pool: hold", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 200, P95: 100 * ms, PoolWaits: 3, PoolUse: 0.95}, SignalOK: true}, 50, ReasonPool},
		{"a full pool without waits steps", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 200, P95: 100 * ms, PoolUse: 1}, SignalOK: true}, 55, ReasonIncrease},
		{"a saturated pool does not stop a cut", Input{Rate: 50, Waiting: 1000, Signal: Signal{Samples: 200, P95: time.Second, PoolWaits: 3, PoolUse: 1}, SignalOK: true}, 35, ReasonLatency},
		{"paused: hold", Input{Rate: 50, Waiting: 1000, Paused: true, Signal: healthy, SignalOK: true}, 50, ReasonPaused},
		{"above maxRate: moved inside", Input{Rate: 500, Waiting: 1000, Signal: healthy, SignalOK: true}, 200, ReasonBounds},
		{"below minRate: moved inside, without signal", Input{Rate: 1, Waiting: 1000}, 10, ReasonBounds},
		{"minRate 0: a cut below the smallest rate pauses", Input{Rate: 0.012, Waiting: 1000, Signal: Signal{Samples: 50, P95: time.Second}, SignalOK: true,
			Settings: room.Adapt{MinRate: 0, MaxRate: 40, TargetP95Ms: 300, MaxErrorRate: 0.05}}, 0, ReasonLatency},
		{"minRate 0, at 0: healthy orders step up", Input{Rate: 0, Waiting: 1000, Signal: Signal{Samples: 5, P95: 10 * ms}, SignalOK: true,
			Settings: room.Adapt{MinRate: 0, MaxRate: 40, TargetP95Ms: 300, MaxErrorRate: 0.05}}, 1, ReasonIncrease},
		{"fractions are kept to three decimals", Input{Rate: 33.3333, Waiting: 1000, Signal: slow, SignalOK: true}, 23.333, ReasonLatency},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.in.Settings == (room.Adapt{}) {
				tt.in.Settings = set
			}
			got := Decide(tt.in, p)
			if got.Rate != tt.wantRate || got.Reason != tt.wantReason {
				t.Fatalf("Decide = %+v, want rate %g reason %s", got, tt.wantRate, tt.wantReason)
			}
			if got.Rate < tt.in.Settings.MinRate || got.Rate > tt.in.Settings.MaxRate {
				t.Fatalf("rate %g outside [%g, %g]", got.Rate, tt.in.Settings.MinRate, tt.in.Settings.MaxRate)
			}
		})
	}
}
