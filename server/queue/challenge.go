package queue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"waitingroom/server/room"
)

// Errors of an enter into a room whose challenge is not off.
var (
	// ErrChallengeRequired reports an enter that would create a new place
	// without a proof of work.
	ErrChallengeRequired = errors.New("a proof of work is required to join")
	// ErrChallengeUsed reports a proof of work that already made a place
	// in the room.
	ErrChallengeUsed = errors.New("proof of work already used")
	// ErrChallengeStale reports a proof of work issued before the room's
	// current phase began (before its pre-queue or its opening): banked.
	ErrChallengeStale = errors.New("proof of work issued before the room's current phase")
)

// Proof is a verified proof of work (see package challenge): its ID names
// it in the room's record of used proofs until a minute past Expires, and
// IssuedAt is when its challenge was issued. The zero Proof is none.
type Proof struct {
	ID       string
	Expires  time.Time
	IssuedAt time.Time
}

// ChallengeWindow is the sliding window over which ChallengeRates counts.
const ChallengeWindow = 10 * time.Second

// MaxChallengeNetworks bounds the networks whose challenges are counted
// apart in a room's window; past it, new networks share one count.
const MaxChallengeNetworks = 100_000

// ChallengeRates are the recent challenges issued a second to one client
// network, and the recent proved joins a second of a room.
type ChallengeRates struct {
	// Mode is the room's challenge setting (room.ChallengeOff and friends;
	// the engine's default for a room saved without one).
	Mode string
	// Network and Room are per second over the last ChallengeWindow: the
	// network's challenges, this one included, and the room's joins made
	// with a proof. Both are 0 when Mode is off.
	Network, Room float64
	// Schedule is the room's schedule (PrequeueAt, OpensAt, ClosesAt,
	// ServerTime and Phase) when CountChallenge returns ErrNotOpen or
	// ErrSaleEnded.
	Schedule Position
}

// SetChallengeDefault sets the challenge setting (room.ChallengeOff, Auto
// or Always) that the engine reads for a room saved without one; the
// zero engine reads off. Call it before the engine is used.
func (e *Engine) SetChallengeDefault(mode string) { e.challengeDefault = mode }

// CountChallenge records a challenge issued in roomName to a client of
// network ("" if unknown; it then counts nothing for a network) and
// returns the rates it is priced at, shared by all instances. A room whose
// challenge is off counts nothing. It returns room.ErrNotFound for an
// unknown room, and, counting nothing, ErrNotOpen before the room's
// pre-queue or opening and ErrSaleEnded after its closing (with the
// schedule), as an enter would.
func (e *Engine) CountChallenge(ctx context.Context, roomName, network string) (ChallengeRates, error) {
	res, err := e.run(ctx, e.s.challengeCount, roomName, network, ChallengeWindow.Milliseconds(),
		e.challengeDefault, MaxChallengeNetworks).Slice()
	if err != nil {
		return ChallengeRates{}, fmt.Errorf("queue: count challenge %s: %w", roomName, err)
	}
	if len(res) != 9 {
		return ChallengeRates{}, fmt.Errorf("queue: count challenge %s: unexpected reply %v", roomName, res)
	}
	code := asInt(res[0])
	if code < 0 {
		return ChallengeRates{}, fmt.Errorf("queue: count challenge %s: %w", roomName, room.ErrNotFound)
	}
	r := ChallengeRates{Mode: room.CanonicalChallenge(asString(res[1]))}
	if code == 0 {
		r.Schedule = Position{Status: StatusNotEntered, Phase: asString(res[4]), PrequeueAt: msOrNil(res[5]),
			OpensAt: msOrNil(res[6]), ClosesAt: msOrNil(res[7]), ServerTime: asInt(res[8])}
		if r.Schedule.Phase == PhaseClosed {
			return r, fmt.Errorf("queue: count challenge %s: %w", roomName, ErrSaleEnded)
		}
		return r, fmt.Errorf("queue: count challenge %s: %w", roomName, ErrNotOpen)
	}
	r.Network, _ = strconv.ParseFloat(asString(res[2]), 64)
	r.Room, _ = strconv.ParseFloat(asString(res[3]), 64)
	return r, nil
}
