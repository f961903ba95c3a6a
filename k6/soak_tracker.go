package k6

import (
	"sync"
	"time"
)

// tracker counts one stream's events: lost and duplicate ticks by id, and
// the delay from each tick's server time to its receipt, by priority
// class.
type tracker struct {
	lastID int64
	// lastEvery and lastT are the "every" and "t" of the last event with
	// an id: the TICKs until the stream's next scheduled event, and the
	// server time (µs) they count from.
	lastEvery, lastT int64
	// tick is the server's TICK (0: 1 s).
	tick time.Duration
	seen bool
	// classed sorts the timed events into priority classes (see classify).
	classed bool
	sh      *shard
	c       *soakCounts
}

// event takes one event: its id (0 when it has none), SSE event name and
// data.
func (t *tracker) event(id int64, name, data []byte) {
	now := time.Now()
	t.c.events.Add(1)
	class := classify(name, data, t.classed)
	ts := jsonInt(data, `"t":`)
	first := !t.seen
	t.seen = true
	if class == ClassReady {
		// No id: the turn is timed by the tick that admitted the visitor.
		// A ready snapshot on connect is not a tick's push.
		if !first {
			t.time(now, 0, class, ts)
		}
		return
	}
	if first { // the snapshot on connect, not a tick
		t.lastID, t.lastEvery, t.lastT = id, cadence(data), ts
		return
	}
	if id == 0 {
		return // a snapshot after a reconnect, or a final position
	}
	if id <= t.lastID {
		t.c.dups.Add(1)
	} else {
		n := missed(t.lastT, ts, t.lastEvery, t.tick)
		t.c.lost.Add(n)
		if t.c.measuring.Load() {
			t.c.lostHold.Add(n)
		}
		t.lastID, t.lastEvery, t.lastT = id, cadence(data), ts
	}
	t.time(now, id, class, ts)
}

// missed is how many TICKs a stream heard nothing beyond its cadence:
// between events whose ticks' server times are last and t (µs), when the
// first said the next would come every TICKs later. One TICK more is
// slack, for a pass that runs late. It is counted in time, not in tick
// ids: a far visitor's ids legitimately jump, each of n instances
// advances the room's id once a TICK, and a hub that is still writing one
// tick's pass skips to the newest (docs/PUSH.md). Nothing is lost without
// both times.
func missed(last, t, every int64, tick time.Duration) int64 {
	if tick <= 0 {
		tick = time.Second
	}
	if last <= 0 || t <= last {
		return 0
	}
	gap := time.Duration(t-last) * time.Microsecond
	return max(0, int64((gap-time.Duration(max(every, 1)+1)*tick)/tick))
}

// time records the delay from the event's "t" (ts, the tick's server
// time, µs) to now, while the soak measures: under the tick id for events
// that have one, and under the class for classed events.
func (t *tracker) time(now time.Time, id int64, class string, ts int64) {
	if !t.c.measuring.Load() || ts <= 0 {
		return
	}
	lat := now.Sub(time.UnixMicro(ts))
	t.sh.mu.Lock()
	defer t.sh.mu.Unlock()
	if id > 0 {
		t.sh.byTick[id] = append(t.sh.byTick[id], lat)
	}
	if class != "" {
		t.sh.byClass[class] = append(t.sh.byClass[class], lat)
	}
}

// shard collects delays with little contention.
type shard struct {
	mu      sync.Mutex
	byTick  map[int64][]time.Duration
	byClass map[string][]time.Duration
}

// newShards makes n empty shards.
func newShards(n int) []shard {
	out := make([]shard, n)
	for i := range out {
		out[i].byTick = map[int64][]time.Duration{}
		out[i].byClass = map[string][]time.Duration{}
	}
	return out
}

// micros is d in µs, as a report's raw samples hold it.
func micros(d time.Duration) int32 {
	return int32(max(0, min(d.Microseconds(), 1<<31-1)))
}
