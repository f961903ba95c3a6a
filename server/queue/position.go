package queue

import (
	"math"
	"math/rand/v2"
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
	Status                 Status  `json:"status"`
	Rank                   int64   `json:"rank"`
	Ticket                 int64   `json:"ticket"`
	Waiting                int64   `json:"currentTotalWaitingCount"`
	EstimatedWaitSeconds   int64   `json:"estimatedWaitSeconds"`
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

	// Head is the highest ticket admitted when the position was read.
	Head int64 `json:"-"`
	// Tick is the room's tick sequence number when the position was read.
	Tick int64 `json:"-"`
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

// EstimatedWait returns the seconds until a visitor with rank people ahead is
// admitted at perSecond admissions per second, rounded up and at most
// MaxEstimatedWait. It returns 0 when the rate is unknown or not positive.
func EstimatedWait(rank int64, perSecond float64) int64 {
	if perSecond <= 0 || math.IsNaN(perSecond) || math.IsInf(perSecond, 0) {
		return 0
	}
	w := math.Ceil((float64(max(rank, 0))+1)/perSecond - 1e-9)
	if !(w < MaxEstimatedWait) {
		return MaxEstimatedWait
	}
	return int64(w)
}
