package challenge

import (
	"math"

	"waitingroom/server/room"
)

// Policy sets a challenge's difficulty (its maxNumber: a solver needs
// maxNumber/2 hashes on average, maxNumber at worst) from the recent join
// rates of the client's network and of the room:
//
//	maxNumber = clamp(M0 × fNet × fRoom, floor, Max)
//	fNet  = max(1, netRate / NetRate)^K
//	fRoom = min(RoomFactorMax, max(1, roomRate / RoomRate))
//
// where floor is M0, or AlwaysFloor in mode always.
type Policy struct {
	// M0 is the difficulty of a lone buyer: at most M0 hashes.
	M0 int64
	// Max caps the difficulty.
	Max int64
	// AlwaysFloor is the least difficulty in mode always.
	AlwaysFloor int64
	// NetRate is the joins per second of one network that cost no more
	// than M0; K is how steeply the cost rises above it (1: linearly).
	NetRate, K float64
	// RoomRate is the room's joins per second above which every join
	// costs more, up to RoomFactorMax times.
	RoomRate, RoomFactorMax float64
}

// DefaultPolicy returns the provisional defaults: M0 20,000 hashes, Max
// 10,000,000, AlwaysFloor 200,000, NetRate 10/s with K 1, RoomRate 500/s
// and RoomFactorMax 4.
func DefaultPolicy() Policy {
	return Policy{M0: 20_000, Max: 10_000_000, AlwaysFloor: 200_000, NetRate: 10, K: 1, RoomRate: 500, RoomFactorMax: 4}
}

// MaxNumber returns the difficulty of a challenge in mode (a room's
// challenge setting) when the client's network joins netRate times a
// second and the room roomRate times; 0 in mode off (no challenge).
func (p Policy) MaxNumber(netRate, roomRate float64, mode string) int64 {
	floor := p.M0
	switch room.CanonicalChallenge(mode) {
	case room.ChallengeAuto:
	case room.ChallengeAlways:
		floor = max(floor, p.AlwaysFloor)
	default:
		return 0
	}
	fNet := math.Pow(math.Max(1, ratio(netRate, p.NetRate)), p.K)
	fRoom := math.Min(p.RoomFactorMax, math.Max(1, ratio(roomRate, p.RoomRate)))
	m := float64(p.M0) * fNet * fRoom
	if math.IsNaN(m) || m > float64(p.Max) {
		m = float64(p.Max)
	}
	return min(max(int64(m), floor), max(p.Max, floor))
}

// ratio returns rate/base, 0 for a non-positive or unknown base or rate.
func ratio(rate, base float64) float64 {
	if !(rate > 0) || !(base > 0) {
		return 0
	}
	return rate / base
}
