package adapt

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"waitingroom/server/histogram"
	"waitingroom/server/queue"
	"waitingroom/server/room"
)

// A deterministic simulation of an adaptive room in front of a shop with
// a knee, in simulated time (a 3-minute sale runs in milliseconds).
//
// The shop has Workers workers that each take Service per order, first
// come first served: its capacity is Workers/Service orders a second (the
// knee). An order that would wait more than simTimeout for a worker fails
// as "unavailable" after that wait. Capacity changes at chosen times.
//
// The room admits at the controller's rate, every simStep, carrying
// fractions as a token bucket, from a line of Line buyers. Each admitted
// buyer orders once, after a think time drawn between thinkMin and
// thinkMax (seeded), or the scenario's Think.
//
// The controller sees what the real one sees: a Recorder counts every
// completed order under the second it completed in, and flushes every
// FlushEvery; the controller decides once a second, at a phase of the
// second drawn from the seed, from the last Params.Window complete seconds
// as flushed so far (the newest may lack up to FlushEvery of orders), and
// its decision is applied as adapt.lua applies it.

const (
	simStep    = 10 * time.Millisecond
	simTimeout = 10 * time.Second
	thinkMin   = 500 * time.Millisecond
	thinkMax   = 3 * time.Second
)

// simChange sets the shop's workers at a second of the sale.
type simChange struct {
	At      int // second
	Workers int
}

// simShop is one scenario.
type simShop struct {
	Workers int
	Service time.Duration
	Changes []simChange
	Line    int64
	Seconds int
	Seed    uint64
	// Settings are the room's adaptive settings; Rate its starting rate
	// (minRate when 0).
	Settings room.Adapt
	Rate     float64
	// Pause pauses the room over [From, To) seconds.
	PauseFrom, PauseTo int
	// Blind drops the signal (SignalOK false) over [From, To) seconds.
	BlindFrom, BlindTo int
	// Think is the buyers' think time, [min, max): thinkMin-thinkMax when
	// zero. Timeout is how long an order waits for a worker before it
	// fails: simTimeout when zero.
	Think   [2]time.Duration
	Timeout time.Duration
}

// simSecond is what happened in one second of the sale, as measured by
// the test (truth, not the controller's view).
type simSecond struct {
	Rate     float64 // the rate set at the second's end
	Admitted int64
	Orders   int64 // completed in this second
	Failed   int64
	P95      time.Duration // exact, of the orders completed in the second
	Capacity float64       // orders/s
	Reason   string        // the second's decision
	Knee     float64       // the knee estimate after it
}

// done is one completed order.
type done struct {
	at, took float64
	ok       bool
}

// minHeap is a min-heap of T by at, for container/heap.
type minHeap[T any] struct {
	items []T
	at    func(T) float64
}

func (h *minHeap[T]) Len() int           { return len(h.items) }
func (h *minHeap[T]) Less(i, j int) bool { return h.at(h.items[i]) < h.at(h.items[j]) }
func (h *minHeap[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *minHeap[T]) Push(x any)         { h.items = append(h.items, x.(T)) }
func (h *minHeap[T]) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// first is the heap's least item; the heap must not be empty.
func (h *minHeap[T]) first() T { return h.items[0] }

func instant(t float64) float64 { return t }

// workers is the shop: the instants its workers are free, a min-heap.
type workers struct {
	free    minHeap[float64]
	service float64
	timeout float64
}

// resize keeps the k workers free soonest (one that leaves finishes the
// order it holds), or adds workers free now.
func (w *workers) resize(k int, now float64) {
	free := w.free.items
	slices.Sort(free)
	if k < len(free) {
		free = free[:k]
	}
	for len(free) < k {
		free = append(free, now)
	}
	w.free = minHeap[float64]{items: free, at: instant}
	heap.Init(&w.free)
}

// order serves an order arriving at: it completes at start+service, or
// fails after timeout of waiting.
func (w *workers) order(at float64) done {
	if w.free.Len() == 0 { // the shop is down
		return done{at: at + w.timeout, took: w.timeout}
	}
	f := w.free.first()
	start := max(at, f)
	if start-at > w.timeout {
		return done{at: at + w.timeout, took: w.timeout}
	}
	w.free.items[0] = start + w.service
	heap.Fix(&w.free, 0)
	return done{at: start + w.service, took: start + w.service - at, ok: true}
}

// law is a control law: Decide, or a reference to compare it with.
type law func(Input, Params) Decision

// run simulates s under Decide with p and returns every second.
func (s simShop) run(p Params) []simSecond { return s.runLaw(Decide, p) }

// runLaw simulates s under decide with p.
func (s simShop) runLaw(decide law, p Params) []simSecond {
	rng := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))
	phase := 0.05 + 0.9*rng.Float64()                  // the controller's tick, within the second
	flushPhase := rng.Float64() * FlushEvery.Seconds() // the Recorder's flushes
	if s.Think == [2]time.Duration{} {
		s.Think = [2]time.Duration{thinkMin, thinkMax}
	}
	if s.Timeout == 0 {
		s.Timeout = simTimeout
	}
	shop := workers{service: s.Service.Seconds(), timeout: s.Timeout.Seconds()}
	shop.resize(s.Workers, 0)
	capacity := func() float64 { return float64(shop.free.Len()) / shop.service }
	if s.Line == 0 {
		s.Line = int64(max(20000, 300*capacity())) // a long line, all along
	}

	st := queue.AdaptRoom{Adapt: s.Settings, Rate: s.Rate}
	st.Adapt.Adaptive = true
	if st.Rate == 0 {
		st.Rate = s.Settings.MinRate
	}
	line := s.Line
	var tokens float64
	arrivals := minHeap[float64]{at: instant}
	completed := minHeap[done]{at: func(d done) float64 { return d.at }}
	flushed := map[int]*Second{} // what the Recorder wrote, by second
	truth := make([]simSecond, s.Seconds)
	lats := make([][]float64, s.Seconds)
	changes := slices.Clone(s.Changes)

	steps := int(time.Duration(s.Seconds) * time.Second / simStep)
	dt := simStep.Seconds()
	for i := range steps {
		t := float64(i) * dt
		sec := int(t)
		for len(changes) > 0 && float64(changes[0].At) <= t {
			shop.resize(changes[0].Workers, t)
			changes = changes[1:]
		}
		truth[sec].Capacity = capacity()
		paused := sec >= s.PauseFrom && sec < s.PauseTo
		// Admissions, as admit.lua: rate x elapsed, fractions carried.
		if !paused && st.Rate > 0 {
			tokens = min(tokens+st.Rate*dt, max(1, st.Rate))
			for tokens >= 1 && line > 0 {
				tokens--
				line--
				truth[sec].Admitted++
				think := s.Think[0].Seconds() + rng.Float64()*(s.Think[1]-s.Think[0]).Seconds()
				heap.Push(&arrivals, t+rng.Float64()*dt+think)
			}
		}
		end := t + dt
		for arrivals.Len() > 0 && arrivals.first() < end {
			heap.Push(&completed, shop.order(heap.Pop(&arrivals).(float64)))
		}
		// The truth, and the Recorder's flushes every FlushEvery.
		flushAt := math.Floor((end-flushPhase)/FlushEvery.Seconds())*FlushEvery.Seconds() + flushPhase
		for completed.Len() > 0 && completed.first().at <= flushAt {
			d := heap.Pop(&completed).(done)
			ds := int(d.at)
			if ds < s.Seconds {
				lats[ds] = append(lats[ds], d.took)
				truth[ds].Orders++
				if !d.ok {
					truth[ds].Failed++
				}
			}
			b := flushed[ds]
			if b == nil {
				b = &Second{}
				flushed[ds] = b
			}
			b.Samples++
			if !d.ok {
				b.Errors++
			}
			b.Hist[histogram.Bucket(Bounds[:], time.Duration(d.took*float64(time.Second)))]++
			b.SumUs += time.Duration(d.took * float64(time.Second)).Microseconds()
			b.SumN++
		}
		// The controller's tick.
		if t <= float64(sec)+phase && float64(sec)+phase < end {
			st.Paused = paused
			st.Waiting = line
			sig := Signal{Seconds: p.Window, Secs: make([]Second, p.Window)}
			newest := int(math.Floor(end-Landed.Seconds())) - 1 // as Reader.Read
			for j := range p.Window {
				if b := flushed[newest-p.Window+1+j]; b != nil {
					sig.Secs[j] = *b
				}
			}
			sig = sig.Last(p.Window)
			ok := sec < s.BlindFrom || sec >= s.BlindTo
			now := time.Unix(0, 0).Add(time.Duration(end * float64(time.Second)))
			d := decide(inputOf(st, sig, ok, now), p)
			st = applied(st, d, now)
			truth[sec].Reason = d.Reason
		}
		truth[sec].Rate = st.Rate
		truth[sec].Knee = st.Knee
	}
	for i, l := range lats {
		if len(l) == 0 {
			continue
		}
		slices.Sort(l)
		truth[i].P95 = time.Duration(l[int(math.Ceil(0.95*float64(len(l))))-1] * float64(time.Second))
	}
	return truth
}

// applied is r after decision d, applied at now as adapt.lua applies it.
func applied(r queue.AdaptRoom, d Decision, now time.Time) queue.AdaptRoom {
	r.N++
	r.Rate, r.Knee, r.Base, r.Last, r.LastReason = d.Rate, d.Knee, d.Base, now, d.Reason
	if d.Cut() {
		r.LastCut = now
	}
	return r
}

// TestSimRecoveryAfterHalving runs k6/adaptive.sh's sale (law_test.go's
// last knee: 60 workers of 1 s, minRate 10, target 1.5 s) on the
// simulator, three seeds: capacity halves at 90 s. The p95 is back under
// the target (5 seconds in a row) within 12 s of the halving, and once the
// backlog has drained the rate does not sit at minRate while the shop has
// room for three times it: at most 2 seconds at minRate in which the shop
// completed under 90% of its capacity.
func TestSimRecoveryAfterHalving(t *testing.T) {
	k := knees[len(knees)-1]
	for seed := range uint64(3) {
		s := k.sale(seed + 1)
		secs := s.run(DefaultParams())
		f := measure(secs, time.Duration(k.target)*time.Millisecond)
		idle, climbed := 0, -1
		for i, sec := range secs[dropAt:backAt] {
			if sec.Rate <= s.Settings.MinRate && float64(sec.Orders) < 0.9*sec.Capacity {
				idle++
			}
			if climbed < 0 && i > f.back && sec.Rate >= 0.9*sec.Capacity {
				climbed = i
			}
		}
		t.Logf("seed %d: p95 back %d s after the halving, %d s at minRate with the shop under 90%% busy, 90%% of the capacity after %d s", seed+1, f.back, idle, climbed)
		if f.back < 0 || f.back > 12 {
			t.Errorf("seed %d: p95 back under the target %d s after the halving, want within 12 s", seed+1, f.back)
		}
		if idle > 2 {
			t.Errorf("seed %d: %d s at minRate %g while the shop had room, want at most 2", seed+1, idle, s.Settings.MinRate)
		}
	}
}
