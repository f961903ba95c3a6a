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

// DefaultPolicy returns the defaults, calibrated by k6/pow.sh (see
// BENCHMARKS.md) for a phone that hashes 20,000 times a second on one
// core (a quarter of headless Chromium's measured rate here):
//
//   - M0 5,000: a buyer alone on a network solves in at most 250 ms.
//   - NetRate 1/s, K 2: cost rises with the square of a network's joins a
//     second above one (2/s: 4×, 5/s: 25×), so a bot's own rate drives
//     its cost up faster than its CPU can follow.
//   - Max 600,000: a network joining ten or more times a second pays 30 s
//     at worst (15 s on average) on that phone; a native bot, 0.13 s of a
//     core per identity. A crowd behind one address still gets in.
//   - AlwaysFloor 40,000: in mode always, 2 s at worst on the phone.
//   - RoomRate 1,000/s, RoomFactorMax 4: a room flooded from many networks
//     raises every join's cost, at most 4×.
func DefaultPolicy() Policy {
	return Policy{M0: 5_000, Max: 600_000, AlwaysFloor: 40_000, NetRate: 1, K: 2, RoomRate: 1000, RoomFactorMax: 4}
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
