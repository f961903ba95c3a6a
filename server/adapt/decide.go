// Package adapt is adaptive admission: a controller that sets
// an adaptive room's rate from the health of the order path, within the
// room's [minRate, maxRate].
//
// The signal (signal.go) is merged in Redis from every instance's orders.
// Decide is pure. The Controller (controller.go) runs it once a second on
// every instance, and the decision is applied by a script that takes at
// most one decision per interval across instances (queue.ApplyAdapt),
// with the law's state: the knee measured, the no-load p95, the last cut.
//
// The law (Decide) is in the spirit of TCP's slow start and BBR: a first
// climb that slows as the p95 rises over its no-load value; a knee
// measured as the orders a saturated shop completes a second; cuts to
// under the knee, deep enough to drain the backlog the loop's delay lets
// build; slow probing near the knee, faster above it. docs/adaptive.md
// has the operator's view and the figures the simulator
// (sim_test.go, law_test.go) holds it to.
package adapt

import (
	"math"
	"strings"
	"time"

	"waitingroom/server/histogram"
	"waitingroom/server/room"
)

// The reasons of a decision: stable codes, for the log, the metric and
// the dashboard.
const (
	// ReasonIncrease: healthy (p95 under the target, errors within the
	// budget) and the line is long: one step up.
	ReasonIncrease = "increase"
	// ReasonLatency: the order p95 is over the target: a cut.
	ReasonLatency = "cut_latency"
	// ReasonQueue: even the fastest orders of the newest second waited
	// (the shop is at its capacity) and the rate is over what it completed
	// (or about it, with the p95 near the target), or, while it climbs,
	// the shop's completions stopped following the rate (a plateau): a
	// queue is growing. The rate goes under the throughput measured,
	// before the p95 crosses the target.
	ReasonQueue = "cut_queue"
	// ReasonErrors: the shop's failures are over the budget: a cut.
	ReasonErrors = "cut_errors"
	// ReasonNoSignal: too few orders in the window to judge (none
	// included): the rate is frozen, never raised.
	ReasonNoSignal = "hold_no_signal"
	// ReasonShortLine: healthy, but the line is short: a higher rate
	// would admit nobody more, and overshoot once the line grows.
	ReasonShortLine = "hold_short_line"
	// ReasonAtMax and ReasonAtMin: the decision would cross a bound.
	ReasonAtMax = "hold_max"
	ReasonAtMin = "hold_min"
	// ReasonPool: healthy, but the order database's pool is saturated
	// (orders waited for a connection, and an instance used at least
	// Params.PoolFull of it): latency is about to rise, so no step up.
	ReasonPool = "hold_pool"
	// ReasonPaused: the room is paused; its signal says nothing of the rate.
	ReasonPaused = "hold_paused"
	// ReasonBounds: the rate was outside [minRate, maxRate] (the bounds
	// changed): moved inside.
	ReasonBounds = "bounds"
	// ReasonSettle: a cut was taken less than Params.Settle ago; the
	// signal still shows the overload that caused it (the buyers admitted
	// before it are still ordering): the rate holds.
	ReasonSettle = "hold_settle"
	// ReasonDrain: the p95 is still over the target, but the rate is
	// under the shop's measured throughput: the backlog the overload left
	// is draining, and a further cut would only leave capacity unused.
	ReasonDrain = "hold_drain"
	// ReasonNear: healthy, but the p95 is near the target (over
	// Params.Amber of the way from the no-load p95 to it): a step up would
	// cross it.
	ReasonNear = "hold_near_target"
	// ReasonProbe: the rate was 0 (minRate 0) for Params.ProbeAfter, so no
	// orders came to judge the shop by: a few buyers are let in to learn
	// whether it is back.
	ReasonProbe = "probe"
	// ReasonHealth: the room's healthURL says the shop is overloaded
	// (load >= 1): a cut, even with few orders to judge by.
	ReasonHealth = "cut_health"
)

// Reasons are every reason, for metrics that show them all.
var Reasons = []string{ReasonIncrease, ReasonLatency, ReasonQueue, ReasonErrors, ReasonHealth, ReasonNoSignal, ReasonShortLine,
	ReasonAtMax, ReasonAtMin, ReasonPool, ReasonPaused, ReasonBounds, ReasonSettle, ReasonDrain, ReasonNear, ReasonProbe}

// Params tune the controller. The zero value is not usable: start from
// DefaultParams.
type Params struct {
	// Every is how often a decision is taken (across all instances).
	Every time.Duration
	// Window is the signal's window, in seconds (1..MaxWindow): the
	// fewest samples are judged on it.
	Window int
	// FastWindow is the newest seconds of Window whose p95 and errors
	// decide (1..Window): a rise shows sooner than in the whole window.
	// With too few orders it grows, to FastMax seconds at most: older
	// seconds may show a backlog drained since.
	FastWindow, FastMax int
	// Growth is the climb's multiplicative step while the p95 shows no
	// queue (at most Queue times the no-load p95, less the further it is
	// over it), and Step an additive one (a share of maxRate) while no
	// knee is known, to leave small rates fast.
	Growth, Step float64
	// Queue is the p95, as a multiple of the no-load p95 (the lowest
	// seen, Decision.Base), at which a queue is forming: the climb slows
	// to Probe. BaseDrift is how fast (per decision) the no-load p95
	// follows a shop that got slower for good.
	Queue, BaseDrift float64
	// Amber is the share of the way from the no-load p95 to the target
	// over which the p95 is near the target: no step up, and a shop
	// saturated there is cut (ReasonQueue).
	Amber float64
	// Probe is the slowest climb (a share of the rate per decision). Above
	// a known knee the climb is Probe plus Accel for every knee the rate is
	// already over Near×knee.
	Probe, Accel float64
	// Near is the share of the knee a healthy rate goes back to at once.
	Near float64
	// Cut is the multiplicative factor of a cut without a throughput to
	// go by (0 < Cut < 1). Drain is the most a cut keeps of the measured
	// throughput (the knee); the further the p95 is over the target, the
	// less it keeps, so that the wait over the target drains in about
	// DrainIn: 1 - (p95-target)/DrainIn of it, and Floor of it at least.
	Cut, Drain, Floor float64
	DrainIn           time.Duration
	// Lag is the loop's delay: from an admission to its order in the
	// signal (the buyers' think time, the second, the flush).
	Lag time.Duration
	// Settle is how long a cut holds: its effect reaches the signal only
	// after the buyers' think time and the window.
	Settle time.Duration
	// ProbeAfter is how long a room at rate 0 (minRate 0) waits before it
	// admits a few buyers to learn whether the shop is back.
	ProbeAfter time.Duration
	// MinSamples is the fewest attempts in the window that judge the
	// shop; fewer freeze the rate. At a low rate fewer are expected: the
	// floor is then half the admissions of the window, and never under
	// 3.
	MinSamples int64
	// LongLine is how many seconds of admissions at the current rate must
	// be waiting for a step up.
	LongLine float64
	// PoolFull is the share of the order database's pool in use (with
	// waits for a connection) that holds the rate.
	PoolFull float64
	// Flat, Over, Rise and MinFlat find a climb's knee in the throughput
	// (plateau): the newest two seconds each completed MinFlat orders at
	// least and within Flat of each other, while the rate is Over above
	// the most of them and the newest second's mean latency Rise above
	// the lowest of the window's seconds with MinFlat orders. On a sharp
	// knee (a shop whose latency does not rise until its workers are all
	// busy) and a target near the no-load p95, the p95 alone shows the
	// knee seconds after the rate passed it.
	Flat, Over, Rise, MinFlat float64
	// Forget is how far over its knee a healthy climb goes before the knee
	// is forgotten: the capacity came back, and the climb is a first climb
	// again (its growth, and its plateau). 1.2-1.35 pass every simulated
	// row; 1.4 and over left one row's recovery at 73 s.
	Forget float64
}

// DefaultParams are the law that law_test.go holds to its figures, on a
// signal of 1 s buckets flushed every 250 ms and buyers who order 0.5-3 s
// after their admission.
func DefaultParams() Params {
	return Params{Every: time.Second, Window: 5, FastWindow: 1, FastMax: 3, Growth: 0.05, Step: 1.0 / 200,
		Queue: 1.3, BaseDrift: 0.002, Amber: 0.6, Probe: 0.005, Accel: 0.1, Near: 0.95,
		Cut: 0.7, Drain: 0.92, Floor: 0.2, DrainIn: 2 * time.Second, Lag: 3 * time.Second, Settle: 3 * time.Second, ProbeAfter: 8 * time.Second,
		MinSamples: 20, LongLine: 2, PoolFull: 0.9, Flat: 0.03, Over: 0.06, Rise: 0.05, MinFlat: 30, Forget: 1.25}
}

// Input is what a decision is made from.
type Input struct {
	Rate     float64
	Waiting  int64
	Paused   bool
	Settings room.Adapt
	Signal   Signal
	// SignalOK is false when the signal could not be read.
	SignalOK bool
	// Knee is the capacity the last cut measured, in admissions a second;
	// 0 for none.
	Knee float64
	// Base is the no-load p95 (the lowest seen); 0 for none.
	Base time.Duration
	// SinceCut is the time since the last cut; 0 when there was none.
	SinceCut time.Duration
}

// Decision is a new rate and why, and the state to keep for the next
// (Input.Knee and Input.Base).
type Decision struct {
	Rate   float64
	Reason string
	Knee   float64
	Base   time.Duration
}

// Cut reports whether d is a cut (its time is kept).
func (d Decision) Cut() bool { return strings.HasPrefix(d.Reason, "cut_") }

// minSamples is the fewest attempts that judge the shop at rate over
// seconds.
func (p Params) minSamples(rate float64, seconds int) int64 {
	expected := int64(rate * float64(seconds) / 2)
	return max(3, min(p.MinSamples*int64(seconds)/int64(max(p.Window, 1)), expected))
}

// Decide is one decision. It never returns a rate outside [minRate,
// maxRate], and never raises the rate without enough signal, but for the
// probe out of rate 0.
func Decide(in Input, p Params) Decision {
	a, rate := in.Settings, in.Rate
	d := Decision{Rate: rate, Knee: in.Knee, Base: in.Base}
	hold := func(reason string) Decision {
		d.Reason = reason
		return d
	}
	switch {
	case rate > a.MaxRate || rate < a.MinRate:
		d.Rate = a.Clamp(rate)
		return hold(ReasonBounds)
	case in.Paused:
		return hold(ReasonPaused)
	case !in.SignalOK:
		return hold(ReasonNoSignal)
	case in.Signal.Overloaded(): // a cut on the health figure below, however few the orders
	case rate == 0 && in.Signal.Samples < p.minSamples(rate, p.Window):
		return probe(in, p, d)
	case in.Signal.Samples < p.minSamples(rate, p.Window):
		return hold(ReasonNoSignal)
	}
	fast := in.Signal.Last(p.FastWindow) // the newest seconds that judge: up to FastMax while too few
	for n := p.FastWindow + 1; n <= min(in.Signal.Seconds, p.FastMax) && fast.Samples < p.minSamples(rate, fast.Seconds); n++ {
		fast = in.Signal.Last(n)
	}
	if fast.Samples < p.minSamples(rate, fast.Seconds) && !in.Signal.Overloaded() { // the newest seconds are empty: the shop may be down
		if rate == 0 {
			return probe(in, p, d)
		}
		return hold(ReasonNoSignal)
	}
	d.Base = baseline(in.Base, fast.P95, p)
	target := time.Duration(a.TargetP95Ms) * time.Millisecond
	sat := saturation(in.Signal, d.Base, target, p)
	reason := ""
	switch {
	case in.Signal.Overloaded(): // first: the samples may be too few to judge the rest
		reason = ReasonHealth
	case fast.ErrorRate() > a.MaxErrorRate:
		reason = ReasonErrors
	case fast.P95 > target:
		reason = ReasonLatency
	case sat.on && (rate > sat.throughput/p.Near || rate > sat.throughput*p.Near && fast.P95 > amber(d.Base, target, p)):
		reason = ReasonQueue
	}
	if reason != "" {
		// A shop that is not saturated all along its newest second may
		// still show its capacity: completions flat under a rate well over
		// them (a drop in capacity shows so a second or two before its
		// queue does). The cut then goes under that throughput at once.
		if pl := plateau(in.Signal, rate, p); !sat.on && pl.on {
			sat = pl
		}
		return cut(in, p, d, sat, fast.P95, reason)
	}
	switch {
	case in.SinceCut > 0 && in.SinceCut < p.Settle:
		return hold(ReasonSettle)
	case float64(in.Waiting) < max(1, rate*p.LongLine):
		return hold(ReasonShortLine)
	case rate >= a.MaxRate:
		return hold(ReasonAtMax)
	case in.Signal.PoolWaits > 0 && in.Signal.PoolUse >= p.PoolFull:
		return hold(ReasonPool)
	}
	if d.Base > 0 && fast.P95 > amber(d.Base, target, p) {
		return hold(ReasonNear)
	}
	// Only a climb (the decision would be a step up) looks for a plateau:
	// a rate held for another reason says nothing of the shop's limit.
	if pl := plateau(in.Signal, rate, p); pl.on && (in.Knee == 0 || rate > in.Knee) {
		return cut(in, p, d, pl, fast.P95, ReasonQueue)
	}
	d.Rate = a.Clamp(round(climb(in, p, fast.P95, d.Base)))
	if p.Forget > 0 && in.Knee > 0 && rate > p.Forget*in.Knee { // a knee long beaten: the capacity came back
		d.Knee = 0
	}
	return hold(ReasonIncrease)
}

// baseline is the no-load p95 after seeing p95: the lowest seen, drifting
// up by BaseDrift a decision so that it follows a shop that got slower.
func baseline(base, p95 time.Duration, p Params) time.Duration {
	if p95 <= 0 {
		return base
	}
	if base == 0 || p95 < base {
		return p95
	}
	return base + time.Duration(float64(base)*p.BaseDrift)
}

// amber is the p95 over which a step up would near the target: Amber of
// the way from the no-load p95 (base) to the target.
func amber(base, target time.Duration, p Params) time.Duration {
	return base + time.Duration(p.Amber*float64(target-min(base, target)))
}

// climb is the healthy rate's next step. Under a known knee it goes back
// to Near×knee at once (the knee is a measured throughput: after a cut,
// the rate rises straight back towards it). Without a knee (the first
// climb) it grows by Growth×rate + Step×maxRate while the p95 is at the
// no-load p95, less as a queue forms (the p95 nears Queue×base), Probe×rate
// at least. Above a known knee it grows by Probe×rate, plus Accel×rate for
// every knee it is already over Near×knee (healthy there, the knee was
// higher: a capacity that came back is found fast), and no faster than the
// first climb would.
func climb(in Input, p Params, p95, base time.Duration) float64 {
	a, rate, k := in.Settings, in.Rate, in.Knee
	if k > 0 && rate < round(k*p.Near) { // rounded: the rate set is, and must not stick under it
		return k * p.Near
	}
	free := 1.0 // the share of the first climb the p95 allows: 1 without a queue, 0 with one
	if base > 0 {
		free = min(max((p.Queue-float64(p95)/float64(base))/(p.Queue-1), 0), 1)
	}
	g, add := p.Growth*free, p.Step*a.MaxRate*free
	if k > 0 {
		g, add = min(p.Probe+p.Accel*(rate/k-p.Near), g), 0
	}
	return rate*(1+max(g, p.Probe)) + add
}

// sat is what the newest second says of the shop's capacity.
type sat struct {
	// on: the shop had a queue all along the newest second: even its
	// fastest tenth of orders waited (their latency, p10, over Queue×base,
	// or over Amber×target while no base is known).
	on bool
	// throughput is the newest second's successful orders: when on, the
	// shop's capacity.
	throughput float64
}

func saturation(s Signal, base, target time.Duration, p Params) sat {
	if len(s.Secs) == 0 {
		return sat{}
	}
	newest := s.Secs[len(s.Secs)-1]
	if newest.Samples == 0 {
		return sat{}
	}
	quick := time.Duration(p.Amber * float64(target))
	if base > 0 {
		quick = time.Duration(p.Queue * float64(base))
	}
	return sat{
		on:         histogram.Quantile(Bounds[:], newest.Hist[:], 0.1) > quick,
		throughput: float64(newest.Samples - newest.Errors),
	}
}

// plateau is the shop's capacity seen in its throughput, while the law
// climbs: the newest two seconds completed about as many orders each
// (within Flat, and MinFlat at least: fewer are too noisy to call flat)
// while the rate is Over above the most of them, and the newest second's
// mean latency is Rise over the lowest of the window's seconds with
// MinFlat orders (a queue, not buyers who do not order; the exact mean,
// since a histogram bucket can be wider than the rise). Under the knee
// the completions follow the climbing rate; at it they stay flat. A
// second whose latency sum does not cover all its orders (an instance of
// a release before the sum was kept, during an upgrade) has no mean and
// shows no plateau.
func plateau(s Signal, rate float64, p Params) sat {
	if len(s.Secs) < 2 || p.Flat <= 0 {
		return sat{}
	}
	lo, hi := math.Inf(1), 0.0
	for _, sec := range s.Secs[len(s.Secs)-2:] {
		if sec.SumN != sec.Samples {
			return sat{}
		}
		n := float64(sec.Samples - sec.Errors)
		lo, hi = min(lo, n), max(hi, n)
	}
	calm := time.Duration(math.MaxInt64)
	for _, sec := range s.Secs {
		if m := sec.Mean(); m > 0 && sec.SumN == sec.Samples && float64(sec.Samples) >= p.MinFlat {
			calm = min(calm, m)
		}
	}
	newest := s.Secs[len(s.Secs)-1]
	if lo < p.MinFlat || hi-lo > p.Flat*hi || rate < (1+p.Over)*hi || float64(newest.Mean()) < (1+p.Rise)*float64(calm) {
		return sat{}
	}
	return sat{on: true, throughput: float64(newest.Samples - newest.Errors)}
}

// cut is the decision on an overloaded shop (reason: errors over the
// budget, a p95 over the target, or a queue).
//
// A saturated newest second (sat.on) measures the knee: the shop's
// throughput. The rate goes under the knee (the last measured, when this
// second is not saturated), by Drain at least, and by as much more as it
// takes to drain in DrainIn the wait over the target, and the wait the
// loop's delay (Lag) adds at a rate over the knee. Without a knee, it is
// cut by Cut.
//
// No cut follows while the last one settles (unless the knee measured
// fell: the capacity dropped again), nor while the rate is already under
// the drain rate: the backlog is draining.
func cut(in Input, p Params, d Decision, s sat, p95 time.Duration, reason string) Decision {
	a, rate := in.Settings, in.Rate
	target := time.Duration(a.TargetP95Ms) * time.Millisecond
	knee, next := in.Knee, rate*p.Cut
	if knee == 0 || rate > knee { // overloaded at this rate: the knee is at most here
		knee = rate
	}
	excess := max(p95-target, 0)
	// A saturated second measures the knee only while the room admits at
	// least what the shop completes: while it drains a backlog, the queue
	// may have run dry within the second.
	measured := s.on && rate >= s.throughput*p.Drain
	switch {
	case measured && s.throughput == 0: // nothing completed: the shop is down, no knee to measure
		next = 0
	case measured:
		knee = s.throughput
		if rate > knee {
			excess += time.Duration((rate/knee - 1) * float64(p.Lag))
		}
		fallthrough
	case reason != ReasonErrors && reason != ReasonHealth: // those say nothing of how far over the knee
		next = knee * min(max(1-float64(excess)/float64(p.DrainIn), p.Floor), p.Drain)
	}
	switch {
	case reason == ReasonLatency && rate <= a.MinRate && in.SinceCut >= p.Settle && in.Knee > a.MinRate &&
		!s.on && s.throughput < in.Knee*p.Drain:
		// At the floor after a cut, the backlog has drained: the shop
		// completes less than its knee and not even its fastest orders
		// wait; the p95 over the target is of the last orders that did.
		// The rate goes back to Near×knee at once rather than sit at the
		// floor while the shop has room.
		d.Rate, d.Reason = a.Clamp(round(in.Knee*p.Near)), ReasonIncrease
		return d
	case in.SinceCut > 0 && in.SinceCut < p.Settle && (!measured || knee >= in.Knee*p.Near):
		d.Reason = ReasonSettle
		return d
	case rate <= a.MinRate:
		d.Knee, d.Reason = knee, ReasonAtMin
		return d
	case rate <= knee*p.Drain && next >= rate*p.Drain: // under the knee already: the backlog drains
		d.Knee, d.Reason = knee, ReasonDrain
		return d
	}
	if next < room.MinRate { // the smallest rate a room takes: below, go to the floor
		next = a.MinRate
	}
	d.Rate, d.Knee, d.Reason = a.Clamp(round(min(next, rate))), knee, reason
	return d
}

// probe is the decision at rate 0: no orders come, so no signal does. After
// ProbeAfter at 0, with buyers waiting, it admits a few (Step×maxRate a
// second, or a tenth of a known knee) to learn whether the shop is back;
// unhealthy, they cut back to 0.
func probe(in Input, p Params, d Decision) Decision {
	if in.Waiting == 0 || in.SinceCut > 0 && in.SinceCut < p.ProbeAfter {
		d.Reason = ReasonAtMin
		return d
	}
	d.Rate = in.Settings.Clamp(round(max(room.MinRate, p.Step*in.Settings.MaxRate, in.Knee/10)))
	d.Reason = ReasonProbe
	return d
}

// round keeps three decimals, so that the rate set reads well.
func round(r float64) float64 { return math.Round(r*1000) / 1000 }
