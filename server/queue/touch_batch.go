package queue

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Session checks that arrive together share one round trip to Redis.
//
// A check's own work in Redis is a few calls of touch_session.lua; the
// round trip around it costs more, on the server (a pooled connection
// taken and given back, a write, a read, a goroutine parked and woken) and
// in Redis (a read and a write of its own). A toucher sends one round
// trip at a time: the checks that arrive while it runs wait for it, and
// then go together, in one pipeline, in the order they arrived (at most
// maxTouchBatch). Nothing waits on a timer: a check on an idle engine is
// sent at once, alone, as a plain script call, and under load the
// pipelines grow to what arrives during one round trip.
//
// Every check still runs its own script call, sent after it arrived: a
// session ended before then is reported gone. A pipeline that fails fails
// every check in it.

// maxTouchBatch bounds the checks of one pipeline (a few µs of Redis each).
const maxTouchBatch = 128

// touchWait bounds a pipeline of checks whose callers set no deadline.
const touchWait = 5 * time.Second

// touchCall is one session check waiting in a toucher.
type touchCall struct {
	ctx      context.Context
	room, id string
	renew    bool
	res      []any
	err      error
	done     chan struct{} // closed once res or err is set
}

// toucher gathers concurrent session checks into as few round trips as it
// can without delaying any (see above).
type toucher struct {
	e *Engine

	mu       sync.Mutex
	pending  []*touchCall
	inFlight bool
	// sent, when set, is told the size of every round trip (tests).
	sent func(n int)
}

// do runs touch_session.lua for c: at once when no round trip runs, else
// in the next one. It returns touch_session.lua's reply when that round
// trip answered, or c.ctx's error when it ends first (a renewal already
// sent may still have been made, as with any call cancelled in flight).
func (t *toucher) do(c *touchCall) ([]any, error) {
	if err := c.ctx.Err(); err != nil {
		return nil, err
	}
	c.done = make(chan struct{})
	t.mu.Lock()
	if t.inFlight {
		t.pending = append(t.pending, c)
		t.mu.Unlock()
		select {
		case <-c.done:
			return c.res, c.err
		case <-c.ctx.Done():
			t.withdraw(c)
			return nil, c.ctx.Err()
		}
	}
	t.inFlight = true
	t.mu.Unlock()
	t.send([]*touchCall{c})
	t.next()
	return c.res, c.err
}

// withdraw takes c out of the waiting checks, if it is still there: its
// caller gave up before it was sent.
func (t *toucher) withdraw(c *touchCall) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i := slices.Index(t.pending, c); i >= 0 {
		t.pending = slices.Delete(t.pending, i, i+1)
	}
}

// next sends the waiting checks after a round trip answered: in a
// goroutine that sends batch after batch while checks keep arriving, so
// that the caller whose check just answered is not held up by the others.
func (t *toucher) next() {
	if batch := t.take(); batch != nil {
		go func() {
			for ; batch != nil; batch = t.take() {
				t.send(batch)
			}
		}()
	}
}

// take returns the next batch of waiting checks (at most maxTouchBatch,
// the first to arrive first), or nil, after marking the toucher idle, when
// none waits.
func (t *toucher) take() []*touchCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) == 0 {
		t.inFlight = false
		return nil
	}
	n := min(len(t.pending), maxTouchBatch)
	batch := slices.Clone(t.pending[:n])
	t.pending = slices.Delete(t.pending, 0, n)
	return batch
}

// send runs batch's checks, one script call each, in one round trip, and
// answers them. Checks whose callers gave up are left out. The round trip
// runs until the latest deadline of its callers, touchWait from now at
// most, whichever of them gives up: the others still wait for it.
func (t *toucher) send(batch []*touchCall) {
	live := batch[:0:0]
	var latest time.Time
	unbounded := false
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.err = err
			close(c.done)
			continue
		}
		live = append(live, c)
		latest, unbounded = laterDeadline(c.ctx, latest, unbounded)
	}
	if t.sent != nil && len(live) > 0 {
		t.sent(len(live))
	}
	switch len(live) {
	case 0:
		return
	case 1:
		c := live[0]
		c.res, c.err = t.e.run(c.ctx, t.e.s.touchSession, c.room, c.id, flag(c.renew)).Slice()
		close(c.done)
		return
	}
	if limit := time.Now().Add(touchWait); unbounded || latest.After(limit) {
		latest = limit
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(live[0].ctx), latest)
	defer cancel()
	pipe := t.e.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(live))
	clock := t.e.clockArg()
	for i, c := range live {
		head := t.e.heads.get(t.e.ns, t.e.s.touchSession, c.room)
		args := make([]any, 0, len(head)+3)
		args = append(append(args, head...), c.id, flag(c.renew), clock)
		cmds[i] = redis.NewCmd(ctx, args...)
		_ = pipe.Process(ctx, cmds[i])
	}
	_, _ = pipe.Exec(ctx)
	for i, c := range live {
		err := cmds[i].Err()
		if redis.HasErrorPrefix(err, "NOSCRIPT") || moving(err) {
			// Redis lost its scripts, or the room's slot moves: this check
			// alone, as run loads the script and waits out a migration.
			c.res, c.err = t.e.run(c.ctx, t.e.s.touchSession, c.room, c.id, flag(c.renew)).Slice()
		} else {
			c.res, c.err = cmds[i].Slice()
		}
		close(c.done)
	}
}
