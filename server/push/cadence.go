package push

import (
	"math"
	"time"
)

// The cadence by distance. A waiting visitor near the front of
// the line hears their position every tick; one further back hears it
// every few ticks, less often the further back they are, so that the
// writes of one tick grow with the log of the crowd, not with the crowd.
// Between events the page counts down on its own (see Countdown), never
// below the truth: the hub checks each tick, without writing, where every
// page's countdown stands, and corrects a page before it could get ahead
// of its visitor's real rank. Ranks shown never go up: every
// event's rank is at or below what the page showed just before it.
const (
	// FrontSeconds is how far ahead the front reaches, in seconds of
	// admissions at the room's rate: these ranks hear every tick.
	FrontSeconds = 10
	// FrontMin is the smallest front, in ranks, whatever the rate.
	FrontMin = 100
	// MaxEvery is the longest gap between a visitor's events, in ticks.
	MaxEvery = 60
	// CountAfter is how many ticks a page holds a new rank before it
	// starts to count down: ranks fall in steps at ticks, the countdown
	// runs smoothly, so it starts late enough to stay behind the steps.
	// A page holds for the stream's quiet (see Quiet) on top of these. They
	// are also how far ahead the hub checks each page's countdown, and so
	// how long a stalled room has before its pages must be told to hold
	// (see the hub's stall watch).
	CountAfter = 3
	// PaceShare is the share of the room's rate the page counts down at:
	// the rest is slack for a tick that admits fewer.
	PaceShare = 0.9
)

// Front returns how many ranks hear every tick at rate admissions per
// second: FrontSeconds of admissions, at least FrontMin.
func Front(rate float64) int64 {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return FrontMin
	}
	return max(FrontMin, int64(math.Ceil(min(rate, 1e9)*FrontSeconds)))
}

// Every returns how many ticks apart a visitor at rank hears their
// position: 1 inside the front, then one more tick for each front's length
// of people ahead, up to MaxEvery. Summed over a line of n, that is about
// front × ln(n/front) events a tick.
func Every(rank, front int64) int64 {
	if rank < front || front <= 0 {
		return 1
	}
	return min(MaxEvery, rank/front+1)
}

// Countdown is what a page is told to do between events: hold the rank
// for After, then take off one rank per 1/Pace seconds, for at most Span,
// and stop counting, holding what it shows, once the stream has said
// nothing for Quiet (a frozen server). Without a Pace it holds the rank;
// its next scheduled event comes about After+Span+After after this one.
type Countdown struct {
	Every int64         // TICKs to the next scheduled event (1: every tick)
	Pace  float64       // ranks per second the page counts down
	After time.Duration // how long the page holds the rank first
	Span  time.Duration // how long it counts down, at most
	Quiet time.Duration // how long a silent stream lets it count on
}

// Quiet returns how long a page may hear nothing on an open stream before
// it stops counting: the heartbeat's period and a fifth more, the margin
// for a late beat.
func Quiet(heartbeat time.Duration) time.Duration { return heartbeat + heartbeat/5 }

// Timing returns the countdown's times for a page that hears its position
// every every ticks, tick apart, and stops counting after quiet without a
// byte: it holds for quiet plus CountAfter ticks, and counts for the rest
// of the gap, if any. A page that counts only after quiet cannot get
// ahead of a server that froze: it stops at most quiet after the last
// byte, which came before the freeze, so it counted only for what was
// left of the freeze minus CountAfter ticks, at PaceShare of the rate,
// while the line fell at the rate until the freeze.
func Timing(every int64, tick, quiet time.Duration) Countdown {
	cd := Countdown{Every: every}
	if every <= CountAfter || tick <= 0 {
		return cd // near the front the ticks themselves are the countdown
	}
	// After and Span also tell a page that holds its rank (no pace: the
	// room is paused, or the gap is shorter than the hold) how long it may
	// hear nothing.
	cd.After = quiet + CountAfter*tick
	cd.Span = max(0, time.Duration(every)*tick-cd.After)
	cd.Quiet = quiet
	return cd
}

// Plan returns the countdown for a visitor at rank, in a room admitting
// rate visitors per second, with ticks tick apart, whose rank falls at
// about fall a second (0: it may not fall, hold it), on a stream that
// hears something at least every quiet (see Quiet).
func Plan(rank int64, rate, fall float64, tick, quiet time.Duration) Countdown {
	cd := Timing(Every(rank, Front(rate)), tick, quiet)
	if cd.Span > 0 {
		cd.Pace = PaceOf(PaceHundredths(fall))
	}
	return cd
}

// PaceHundredths returns the countdown's pace at rate, in hundredths of a
// rank per second: PaceShare of the rate, rounded down to what the page
// reads (two decimals).
func PaceHundredths(rate float64) int32 {
	if !(rate > 0) || math.IsInf(rate, 0) {
		return 0
	}
	return int32(min(math.Floor(rate*PaceShare*100), math.MaxInt32))
}

// PaceOf returns a pace given in hundredths, as the page reads it.
func PaceOf(hundredths int32) float64 { return float64(hundredths) / 100 }

// Shown returns the rank a page shows elapsed after it was told rank with
// countdown cd: never below 0.
func (cd Countdown) Shown(rank int64, elapsed time.Duration) int64 {
	if cd.Pace <= 0 || elapsed <= cd.After {
		return rank
	}
	counting := min(elapsed-cd.After, cd.Span)
	fell := int64(math.Floor(cd.Pace * counting.Seconds()))
	return max(0, rank-fell)
}
