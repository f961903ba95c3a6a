package queue

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"time"
)

// Status is a visitor's state in a room.
type Status string

// The three statuses of the seed's model.
const (
	StatusWaiting    Status = "WAITING"
	StatusReady      Status = "READY"
	StatusNotEntered Status = "NOT_ENTERED"
	// StatusPrequeued: in the pre-queue, before the draw; no rank yet.
	StatusPrequeued Status = "PREQUEUED"
)

// Position is what a visitor is told about their place. The JSON names are
// the HTTP contract's (they keep the seed's names).
type Position struct {
	Status  Status `json:"status"`
	Rank    int64  `json:"rank"`
	Ticket  int64  `json:"ticket"`
	Waiting int64  `json:"currentTotalWaitingCount"`
	// EstimatedWaitSeconds is nil when no honest estimate exists (paused).
	EstimatedWaitSeconds   *int64  `json:"estimatedWaitSeconds"`
	PollingIntervalSeconds int     `json:"pollingIntervalSeconds"`
	EntryToken             *string `json:"entryToken"`
	// SoldOut reports that the room has nothing left to sell: nobody is
	// admitted or enters any more.
	SoldOut bool `json:"soldOut"`

	// DRAW: the schedule. Phase is "scheduled", "prequeue", "open" or
	// "closed" (see PhaseScheduled...); the times are unix ms or null;
	// ServerTime is the server's clock (unix ms) when the answer was made,
	// so that a page counts down from it rather than from its own clock.
	Phase      string `json:"phase"`
	PrequeueAt *int64 `json:"prequeueAt"`
	OpensAt    *int64 `json:"opensAt"`
	ClosesAt   *int64 `json:"closesAt"`
	ServerTime int64  `json:"serverTime"`
	// Line is the visitor's number in the line, which ranks count from; it
	// differs from Ticket for a drawn buyer, whose Ticket is their
	// pre-queue ticket.
	Line int64 `json:"-"`
	// LineName is the name of the visitor's line in a room with lines
	// ("" otherwise, and for a READY visitor); LineIndex is its place in
	// the room's lines, from 0. Rank and Waiting count that line.
	LineName  string `json:"line,omitempty"`
	LineIndex int    `json:"-"`

	// ABSENCE begin.

	// Paused reports that admissions are stopped: no ETA is given.
	Paused bool `json:"paused"`
	// PassExpiresAt is when a READY pass stops being usable, in unix ms as
	// Redis sees it; 0 (left out) otherwise.
	PassExpiresAt int64 `json:"passExpiresAt,omitempty"`
	// RankUpReason says why the rank went up, when it did (RankUp*).
	RankUpReason string `json:"rankUpReason,omitempty"`

	// ABSENCE end.

	// Head is the highest ticket admitted when the position was read.
	Head int64 `json:"-"`
	// Tick is the room's tick sequence number when the position was read.
	Tick int64 `json:"-"`
	// Born is when the room was created, in unix ms (0: unknown): a room
	// deleted and created again, or restored, counts its ticks and tickets
	// anew, and Born tells its positions from the old room's.
	Born int64 `json:"-"`
	// Proved reports an enter whose proof of work made the place (and is
	// now used).
	Proved bool `json:"-"`
	// Created reports an enter that made a new place (ticket or pre-queue
	// entry); a lapsed visitor put back at the end is no new place.
	Created bool `json:"-"`
}

// LineRank returns the rank in a room's single line that waits as long
// as rank does in a line that gets share (0 to 1) of the room's
// throughput: a line with a share of 0.25 moves one place for every four
// the room admits.
func LineRank(rank int64, share float64) int64 {
	if share >= 1 || !(share > 0) || rank < 0 {
		return rank
	}
	return int64(math.Ceil(float64(rank+1)/share-1e-9)) - 1
}

// Reasons a visitor's rank can go up (Position.RankUpReason).
const (
	// RankUpReturned: the visitor came back after their return window
	// (returnWithinSeconds) and joined again at the end of the line.
	RankUpReturned = "returned"
	// RankUpRecount: the server recounted the line after losing track of
	// it (a resync) and found fewer ahead had left than it had shown.
	RankUpRecount = "recount"
)

// Slots is when a room's maxActive slots free up, as the scripts sample
// it (lib.lua slotSchedule): the ETA of a rank follows the real release
// times, so that passes admitted in a wave, and so freed in a wave, are
// not averaged into a rate that no buyer sees.
type Slots struct {
	// Rate is the room's configured admission rate, per second.
	Rate float64 `json:"q"`
	// MaxActive is the number of slots.
	MaxActive int64 `json:"A"`
	// Hold is the mean time a pass holds its slot, in seconds.
	Hold float64 `json:"H"`
	// Free are up to 32 samples, evenly spaced over the slots sorted by
	// when they free, in ms after the sample was taken; ascending.
	Free []int64 `json:"f"`
}

// Wait returns the seconds until rank (people ahead) is admitted: the
// slot that frees (rank mod MaxActive)-th, rank / MaxActive passes later,
// and never sooner than the rate allows. ok is false when s is unusable.
func (s *Slots) Wait(rank int64) (seconds float64, ok bool) {
	if s == nil || s.MaxActive <= 0 || len(s.Free) == 0 || !(s.Rate > 0) || !(s.Hold > 0) || rank < 0 {
		return 0, false
	}
	k, cycles := rank%s.MaxActive, rank/s.MaxActive
	x := float64(k) * float64(len(s.Free)) / float64(s.MaxActive)
	i := int(x)
	next := float64(s.Free[0]) + s.Hold*1000 // the first slot's next pass
	if i+1 < len(s.Free) {
		next = float64(s.Free[i+1])
	}
	free := float64(s.Free[i]) + (next-float64(s.Free[i]))*(x-float64(i))
	return max(free/1000+float64(cycles)*s.Hold, float64(rank+1)/s.Rate), true
}

// ETA returns the Position field for rank, read at a tick (a position
// event of the push): ETAAt with no time since the tick.
func ETA(rank int64, perSecond float64, slots *Slots, paused bool) *int64 {
	return ETAAt(rank, perSecond, slots, paused, TickPhase{})
}

// TickPhase is where a room's admission ticks stand when a position is
// read: the time since the last tick of any instance, and the tick's
// length (0: unknown, taken as 1 s). The zero value is a read at a tick.
type TickPhase struct {
	Since, Tick time.Duration
}

// ETAAt returns the Position field for rank read at phase: nil when no
// estimate is honest (paused, or no admissions: perSecond 0); from the
// slots' schedule when maxActive is set; else at perSecond
// (EstimatedWaitAt).
func ETAAt(rank int64, perSecond float64, slots *Slots, paused bool, phase TickPhase) *int64 {
	if paused || !(perSecond > 0) || math.IsInf(perSecond, 0) {
		return nil
	}
	w := EstimatedWaitAt(rank, perSecond, phase)
	if sec, ok := slots.Wait(rank); ok {
		w = int64(min(math.Ceil(sec-1e-9), MaxEstimatedWait))
	}
	return &w
}

// parseSlots reads a script's slot schedule (” when maxActive is 0).
func parseSlots(v any) *Slots {
	var s Slots
	if b := asString(v); b == "" || json.Unmarshal([]byte(b), &s) != nil {
		return nil
	}
	return &s
}

// PollingTier returns the seed's polling interval for a rank, in seconds:
// 1 s under 100 ahead, 3 s under 1,000, otherwise 5 s.
func PollingTier(rank int64) int {
	switch {
	case rank < 100:
		return 1
	case rank < 1000:
		return 3
	default:
		return 5
	}
}

// PollingInterval returns PollingTier plus up to half of it in whole-second
// jitter, so that a crowd at the same tier does not poll in lockstep.
func PollingInterval(rank int64) int {
	base := PollingTier(rank)
	return base + rand.IntN(base/2+1)
}

// MaxEstimatedWait is the longest wait EstimatedWait reports, in seconds
// (about 68 years): a deep line at the floor rate says "very long", never
// a number that overflowed.
const MaxEstimatedWait = math.MaxInt32

// EstimatedWait returns the seconds until a visitor with rank people
// ahead is admitted at perSecond admissions per second, read at a tick:
// EstimatedWaitAt with no time since it.
func EstimatedWait(rank int64, perSecond float64) int64 {
	return EstimatedWaitAt(rank, perSecond, TickPhase{})
}

// EstimatedWaitAt returns the seconds until a visitor with rank people
// ahead is admitted at perSecond admissions per second, read at phase.
// Admissions go out at ticks: the visitor's is the first tick once rank+1
// admissions' worth of credit has accrued since the last one, so the wait
// is that many whole ticks less the time since the last tick. It is an
// estimate, not a bound: rounded to the nearest second, 1 at least, at
// most MaxEstimatedWait (the push's countdown of ranks is what never runs
// ahead; docs/PUSH.md). It returns 0 when the rate is unknown or not
// positive.
func EstimatedWaitAt(rank int64, perSecond float64, phase TickPhase) int64 {
	if perSecond <= 0 || math.IsNaN(perSecond) || math.IsInf(perSecond, 0) {
		return 0
	}
	tick := phase.Tick.Seconds()
	if tick <= 0 {
		tick = 1
	}
	since := min(max(phase.Since.Seconds(), 0), tick)
	need := (float64(max(rank, 0)) + 1) / perSecond
	w := max(math.Round(math.Ceil(need/tick-1e-9)*tick-since), 1)
	if !(w < MaxEstimatedWait) {
		return MaxEstimatedWait
	}
	return int64(w)
}
