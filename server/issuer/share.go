package issuer

import (
	"context"
	"time"
)

// The instances share the rooms' ticks: each room is ticked by one issuer
// at a time, its owner, which every instance computes alike from the list
// of live issuers (rendezvous hashing: the issuer whose hash with the
// room's name is highest). Each loop beats at every tick and reads the
// issuers that beat within liveFor; an issuer that stops beating (killed)
// drops out of every list within liveFor, and its rooms go to the others
// at their next tick. A loop that stops retires at once. While instances
// come and go, two issuers may tick a room in the same tick, or none for
// a tick: the credit lives in Redis and accrues by its clock, so a room
// ticked twice admits what it would once, and a late tick catches up.

// Peers is the registry of the deployment's issuers (see queue.Engine's
// Beat and Retire).
type Peers interface {
	Beat(ctx context.Context, id string, live time.Duration) ([]string, error)
	Retire(ctx context.Context, id string) error
}

// Share has the loop tick only the rooms it owns among the issuers of
// peers, as id, and returns the loop. id must be unique to this process.
// Call it before Run. A loop that does not share ticks every room.
func (l *Loop) Share(peers Peers, id string) *Loop {
	l.peers, l.id = peers, id
	return l
}

// liveFor is how long an issuer counts as live after its last beat: a
// tick and a half, and never under a tick plus 50 ms. An issuer killed
// right after a beat has its rooms taken over between one and a half and
// two and a half ticks later, which the credit's catch-up (a late tick
// admits up to two batches) mostly covers.
func liveFor(tick time.Duration) time.Duration {
	return max(tick+tick/2, tick+50*time.Millisecond)
}

// mine beats and returns the rooms of rooms whose owner is this loop. When
// the beat fails, it returns them all: a room ticked twice admits what it
// would once, and a Redis that cannot take a beat fails the ticks anyway.
func (l *Loop) mine(ctx context.Context, rooms []string) []string {
	if l.peers == nil {
		return rooms
	}
	ids, err := l.peers.Beat(ctx, l.id, liveFor(l.tick))
	if err != nil {
		if ctx.Err() == nil {
			l.log.Warn("issuer: beat", "err", err)
		}
		return rooms
	}
	out := make([]string, 0, len(rooms)/max(1, len(ids))+1)
	for _, r := range rooms {
		if Owner(r, ids, l.id) == l.id {
			out = append(out, r)
		}
	}
	return out
}

// retire takes the loop off the issuers, when it shares the ticks.
func (l *Loop) retire(ctx context.Context) {
	if l.peers == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if err := l.peers.Retire(ctx, l.id); err != nil {
		l.log.Warn("issuer: retire", "err", err)
	}
}

// Owner returns the issuer among ids, or self, that ticks room: the one
// whose weight with room is highest (ties to the smaller id). self counts
// though ids lack it (its own beat may not be in a list read just before).
func Owner(room string, ids []string, self string) string {
	best, bestW := self, weight(self, room)
	for _, id := range ids {
		if w := weight(id, room); w > bestW || w == bestW && id < best {
			best, bestW = id, w
		}
	}
	return best
}

// weight is the 64-bit FNV-1a hash of id, a zero byte and room, mixed by
// SplitMix64's finalizer so that ids and rooms that differ in one byte
// still weigh apart.
func weight(id, room string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * prime
	}
	h *= prime // the zero byte between id and room
	for i := 0; i < len(room); i++ {
		h = (h ^ uint64(room[i])) * prime
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
