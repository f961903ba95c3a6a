package queue

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// BATCH: enters of one room that arrive together share one
// script call.
//
// An enter's own work in Redis is a dozen calls; the script call around it
// (the round trip, the script's set-up, reading the room's settings and
// schedule) costs as much again, and as much on the server (a write and a
// read on a pooled connection, a goroutine parked and woken). A batcher
// sends a room's enters one call at a time: the enters that arrive while
// that call runs wait for it, and then go together in the next call, in
// the order they arrived (at most maxBatch). Nothing waits on a timer: an
// enter into an idle room is sent at once, and under load the batches grow
// to what arrives during one call.
//
// The script places the visitors one after the other, each atomically and
// idempotently (strict FIFO by the room's counter), and their tickets come from the room's
// Redis counter in that order: a visitor entered twice in one batch, or in
// two, keeps one ticket. A call that fails fails every enter of its batch:
// none of them is acknowledged.

// defaultMaxBatch bounds the enters of one script call, and so how long
// one call holds Redis (about 10 µs an enter).
const defaultMaxBatch = 64

// defaultCalls is how many calls of one room's enters may be in flight at
// once.
const defaultCalls = 1

// EnterWait bounds how long an enter waits for its answer, whatever its
// context's deadline: at most half of it for the calls ahead of its own
// (past that it is answered context.DeadlineExceeded, unsent), and its own
// call runs at most the other half. A caller need not arm a timer of its
// own for every enter (the HTTP adapter does not).
const EnterWait = 5 * time.Second

// batchFunc runs the position script for reqs of room at once, and returns
// one result per request, in their order; an error fails them all.
type batchFunc func(ctx context.Context, room string, reqs []placeReq) ([]placeResult, error)

// placeReq is one visitor's part of a position script call.
type placeReq struct {
	visitor string
	enter   bool
	network string
	c       Campaign // as counted (Campaign.Counted)
	proof   Proof
	// minted: the visitor's id was minted for this enter, so they have no
	// place yet and the script does not look for one (see EnterNew).
	minted bool
	// cred: what the enter brings to a room whose access is limited.
	cred Credentials
}

// placeResult is one visitor's answer from a position script call: their
// position, or the error of their own enter (a proof refused, the room
// unknown).
type placeResult struct {
	p   Position
	err error
}

// batchCall is one enter waiting in a batcher.
type batchCall struct {
	ctx    context.Context
	req    placeReq
	queued time.Time // when it began to wait for a call ahead; zero if none
	res    placeResult
	done   chan struct{} // closed once res is set
}

// roomBatch is a room's enters: the ones waiting for the next call, and
// whether a call runs.
type roomBatch struct {
	pending  []*batchCall
	inFlight int
}

// batcher gathers the enters of each room into as few script calls as it
// can without delaying any (see above). Its zero value is not usable: see
// newBatcher.
type batcher struct {
	run   batchFunc
	max   int
	calls int           // the most calls of one room at once
	wait  time.Duration // see EnterWait

	mu    sync.Mutex
	rooms map[string]*roomBatch // only rooms with a call in flight
}

// newBatcher returns a batcher that sends batches of at most max enters
// through run, at most calls of one room at once, and answers each enter
// within wait (see EnterWait).
func newBatcher(run batchFunc, max, calls int, wait time.Duration) *batcher {
	return &batcher{run: run, max: max, calls: calls, wait: wait, rooms: map[string]*roomBatch{}}
}

// do places req in room, in a call of its own if none of room's runs now,
// else in the next one. It returns when that call answered, or when ctx
// ends (an enter already sent may still have been made, as with any call
// cancelled in flight).
func (b *batcher) do(ctx context.Context, room string, req placeReq) (Position, error) {
	if err := ctx.Err(); err != nil {
		return Position{}, err
	}
	c := &batchCall{ctx: ctx, req: req, done: make(chan struct{})}
	b.mu.Lock()
	rb := b.rooms[room]
	if rb == nil {
		rb = &roomBatch{}
		b.rooms[room] = rb
	}
	if rb.inFlight >= b.calls {
		c.queued = time.Now()
		rb.pending = append(rb.pending, c)
		b.mu.Unlock()
		select {
		case <-c.done:
			return c.res.p, c.res.err
		case <-ctx.Done():
			b.withdraw(rb, c)
			return Position{}, ctx.Err()
		}
	}
	// The room is idle: this enter goes now, alone, in this goroutine.
	rb.inFlight++
	b.mu.Unlock()
	b.send(room, []*batchCall{c})
	b.next(room, rb)
	return c.res.p, c.res.err
}

// withdraw takes c out of rb's waiting enters, if it is still there: its
// caller gave up before it was sent.
func (b *batcher) withdraw(rb *roomBatch, c *batchCall) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := slices.Index(rb.pending, c); i >= 0 {
		rb.pending = slices.Delete(rb.pending, i, i+1)
	}
}

// next runs room's waiting enters after a call answered: in a goroutine
// that sends batch after batch while enters keep arriving, so that the
// caller whose call just answered is not held up by the others. With none
// waiting the room is idle again.
func (b *batcher) next(room string, rb *roomBatch) {
	if batch := b.take(room, rb); batch != nil {
		go func() {
			for ; batch != nil; batch = b.take(room, rb) {
				b.send(room, batch)
			}
		}()
	}
}

// take returns the next batch of room's waiting enters (at most max, the
// first to arrive first), or nil, after marking the room idle, when none
// waits.
func (b *batcher) take(room string, rb *roomBatch) []*batchCall {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(rb.pending) == 0 {
		if rb.inFlight--; rb.inFlight == 0 {
			delete(b.rooms, room)
		}
		return nil
	}
	n := min(len(rb.pending), b.max)
	batch := slices.Clone(rb.pending[:n])
	rb.pending = slices.Delete(rb.pending, 0, n)
	return batch
}

// send runs one call for batch and answers each of its enters. Enters whose
// callers gave up, or that waited longer than half of b.wait, are left out
// (answered with their context's error, or context.DeadlineExceeded). The
// call runs until half of b.wait from now, or the latest deadline of its
// callers if that is sooner, whichever of them gives up: the others still
// wait for it.
func (b *batcher) send(room string, batch []*batchCall) {
	now := time.Now()
	live := batch[:0:0]
	var latest time.Time
	unbounded := false
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.res.err = err
			close(c.done)
			continue
		}
		if waited := now.Sub(c.queued); !c.queued.IsZero() && waited > b.wait/2 {
			c.res.err = fmt.Errorf("waited %v for the calls ahead: %w", waited.Round(time.Millisecond), context.DeadlineExceeded)
			close(c.done)
			continue
		}
		live = append(live, c)
		latest, unbounded = laterDeadline(c.ctx, latest, unbounded)
	}
	if len(live) == 0 {
		return
	}
	deadline := now.Add(b.wait / 2)
	if !unbounded && latest.Before(deadline) {
		deadline = latest
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(live[0].ctx), deadline)
	defer cancel()
	reqs := make([]placeReq, len(live))
	for i, c := range live {
		reqs[i] = c.req
	}
	res, err := b.run(ctx, room, reqs)
	if err == nil && len(res) != len(live) {
		err = fmt.Errorf("%d answers to %d enters", len(res), len(live))
	}
	for i, c := range live {
		if err != nil {
			c.res.err = fmt.Errorf("batch of %d: %w", len(live), err)
		} else {
			c.res = res[i]
		}
		close(c.done)
	}
}

// laterDeadline folds ctx's deadline into the latest of a batch's callers
// so far: unbounded once a caller has none.
func laterDeadline(ctx context.Context, latest time.Time, unbounded bool) (time.Time, bool) {
	d, ok := ctx.Deadline()
	switch {
	case !ok:
		return latest, true
	case d.After(latest):
		return d, unbounded
	}
	return latest, unbounded
}
