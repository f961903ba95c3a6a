// Package adapt is adaptive admission (issue 15): a controller that sets
// an adaptive room's rate from the health of the order path, AIMD-style,
// within the room's [minRate, maxRate].
//
// The signal (signal.go) is merged in Redis from every instance's orders.
// Decide is pure. The Controller (controller.go) runs it once a second on
// every instance, and the decision is applied by a script that takes at
// most one decision per interval across instances (queue.ApplyAdapt).
package adapt

import (
	"math"
	"time"

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
	// ReasonHealth: the room's healthURL says the shop is overloaded
	// (load >= 1): a cut, even with few orders to judge by.
	ReasonHealth = "cut_health"
)

// Reasons are every reason, for metrics that show them all.
var Reasons = []string{ReasonIncrease, ReasonLatency, ReasonErrors, ReasonNoSignal, ReasonShortLine,
	ReasonAtMax, ReasonAtMin, ReasonPool, ReasonPaused, ReasonBounds, ReasonHealth}

// Params tune the controller. The zero value is not usable: start from
// DefaultParams.
type Params struct {
	// Every is how often a decision is taken (across all instances).
	Every time.Duration
	// Window is the signal's window, in seconds (1..MaxWindow).
	Window int
	// Step is the additive step, as a share of the room's maxRate.
	Step float64
	// Cut is the multiplicative factor of a cut (0 < Cut < 1).
	Cut float64
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
}

// DefaultParams are one decision a second over a 5 s window, steps of
// 1/40 of maxRate (from minRate to maxRate in 40 s), cuts to 70%, at
// least 20 orders (fewer at low rates), at least 2 s of line, and no step
// while 90% of the order database's pool is in use with waits.
func DefaultParams() Params {
	return Params{Every: time.Second, Window: 5, Step: 1.0 / 40, Cut: 0.7, MinSamples: 20, LongLine: 2, PoolFull: 0.9}
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
}

// Decision is a new rate and why.
type Decision struct {
	Rate   float64
	Reason string
}

// minSamples is the fewest attempts that judge the shop at rate.
func (p Params) minSamples(rate float64) int64 {
	expected := int64(rate * float64(p.Window) / 2)
	return max(3, min(p.MinSamples, expected))
}

// Decide is one AIMD decision. It never returns a rate outside
// [minRate, maxRate], and never raises the rate without enough signal.
func Decide(in Input, p Params) Decision {
	a := in.Settings
	rate := in.Rate
	switch {
	case rate > a.MaxRate || rate < a.MinRate:
		return Decision{a.Clamp(rate), ReasonBounds}
	case in.Paused:
		return Decision{rate, ReasonPaused}
	case !in.SignalOK || in.Signal.Samples < p.minSamples(rate) && !in.Signal.Overloaded():
		return Decision{rate, ReasonNoSignal}
	}
	reason := ""
	switch {
	case in.Signal.Overloaded(): // first: the samples may be too few to judge the rest
		reason = ReasonHealth
	case in.Signal.ErrorRate() > a.MaxErrorRate:
		reason = ReasonErrors
	case in.Signal.P95 > time.Duration(a.TargetP95Ms)*time.Millisecond:
		reason = ReasonLatency
	}
	if reason != "" {
		if rate <= a.MinRate {
			return Decision{rate, ReasonAtMin}
		}
		next := rate * p.Cut
		if next < room.MinRate { // the smallest rate a room takes: below, go to the floor
			next = a.MinRate
		}
		return Decision{a.Clamp(round(next)), reason}
	}
	switch {
	case float64(in.Waiting) < max(1, rate*p.LongLine):
		return Decision{rate, ReasonShortLine}
	case rate >= a.MaxRate:
		return Decision{rate, ReasonAtMax}
	case in.Signal.PoolWaits > 0 && in.Signal.PoolUse >= p.PoolFull:
		return Decision{rate, ReasonPool}
	}
	return Decision{a.Clamp(round(rate + p.Step*a.MaxRate)), ReasonIncrease}
}

// round keeps three decimals, so that the rate set reads well.
func round(r float64) float64 { return math.Round(r*1000) / 1000 }
