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
)

// Proof is a verified proof of work (see package challenge): its ID names
// it in the room's record of used proofs until a minute past Expires. The
// zero Proof is none.
type Proof struct {
	ID      string
	Expires time.Time
}

// ChallengeWindow is the sliding window over which ChallengeRates counts.
const ChallengeWindow = 10 * time.Second

// ChallengeRates are the recent challenges issued a second, to one client
// network and in a room.
type ChallengeRates struct {
	// Mode is the room's challenge setting (room.ChallengeOff and friends).
	Mode string
	// Network and Room are per second over the last ChallengeWindow, this
	// challenge included; both are 0 when Mode is off.
	Network, Room float64
}

// CountChallenge records a challenge issued in roomName to a client of
// network ("" if unknown; it then counts for the room only) and returns
// the rates it is priced at, shared by all instances. A room whose
// challenge is off counts nothing. It returns room.ErrNotFound for an
// unknown room.
func (e *Engine) CountChallenge(ctx context.Context, roomName, network string) (ChallengeRates, error) {
	res, err := e.run(ctx, e.s.challengeCount, roomName, network, ChallengeWindow.Milliseconds()).Slice()
	if err != nil {
		return ChallengeRates{}, fmt.Errorf("queue: count challenge %s: %w", roomName, err)
	}
	if len(res) != 4 {
		return ChallengeRates{}, fmt.Errorf("queue: count challenge %s: unexpected reply %v", roomName, res)
	}
	if asInt(res[0]) < 0 {
		return ChallengeRates{}, fmt.Errorf("queue: count challenge %s: %w", roomName, room.ErrNotFound)
	}
	r := ChallengeRates{Mode: room.CanonicalChallenge(asString(res[1]))}
	r.Network, _ = strconv.ParseFloat(asString(res[2]), 64)
	r.Room, _ = strconv.ParseFloat(asString(res[3]), 64)
	return r, nil
}
