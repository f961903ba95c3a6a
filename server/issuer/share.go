package issuer

import (
	"context"
	"time"

	"waitingroom/server/queue"
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
// Beat, Retire and AskDraw).
type Peers interface {
	Beat(ctx context.Context, id string, live time.Duration) (queue.Beat, error)
	Retire(ctx context.Context, id string) error
	AskDraw(ctx context.Context, room string, d time.Duration) error
}

// Share has the loop tick only the rooms it owns among the issuers of
// peers, as id, and returns the loop. id must be unique among the
// deployment's instances. Call it before Run. A loop that does not share
// ticks every room.
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

// askFor is how long an owner's ask for its room's draw holds: it asks
// again at every tick that finds the room waiting for its draw.
func askFor(tick time.Duration) time.Duration { return max(3*tick, 5*time.Second) }

// failingTicks is how many ticks in a row in which every admission failed
// make a loop stop beating: its rooms go to the issuers whose ticks work
// (an instance that reaches Redis for its beat but whose admissions fail,
// such as a version whose script is broken, would otherwise hold its
// share of the rooms unticked). It beats again after a tick that worked.
const failingTicks = 3

// mine beats and returns the rooms of rooms whose owner is this loop, and
// the rooms whose draw their owner asked any issuer to run. When the beat
// fails, or the loop's admissions have failed failingTicks ticks in a
// row, it returns them all: a room ticked twice admits what it would
// once. It forgets the burst and the phase it kept of the rooms that are
// not its own, so that a room that comes back is treated afresh.
func (l *Loop) mine(ctx context.Context, rooms []string) (own, asks []string) {
	if l.peers == nil {
		return rooms, nil
	}
	l.mu.Lock()
	failing := l.failing >= failingTicks
	l.mu.Unlock()
	if failing {
		return rooms, nil
	}
	bctx, cancel := context.WithTimeout(ctx, max(l.tick/2, 100*time.Millisecond))
	defer cancel()
	b, err := l.peers.Beat(bctx, l.id, liveFor(l.tick))
	if err != nil {
		if ctx.Err() == nil {
			l.log.Warn("issuer: beat", "err", err)
		}
		return rooms, nil
	}
	own = make([]string, 0, len(rooms)/max(1, len(b.Live))+1)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range rooms {
		if Owner(r, b.Live, l.id) == l.id {
			own = append(own, r)
		} else {
			delete(l.want, r)
			delete(l.phase, r)
		}
	}
	return own, b.DrawAsks
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
