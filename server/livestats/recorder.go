package livestats

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/loop"
	"waitingroom/server/queue"
	"waitingroom/server/room"
)

// maxPending bounds the (room, second) buckets a Recorder holds between
// flushes; observations beyond it are dropped, so that a flood of rooms
// cannot grow an instance's memory.
const maxPending = 10000

// maxReasonLen bounds a failure reason (salelog.Reason's codes are short).
const maxReasonLen = 32

type slot struct {
	room string
	sec  int64
}

// pending is what one instance saw of one room in one second.
type pending struct {
	tick                       bool // the figures below were set by a tick
	waiting, prequeued, active int64
	rate                       float64
	admitted, placed           int64
	issuerFailed               int64
	failed                     map[string]int64
	buckets                    [nBuckets]int64
}

// Recorder gathers this instance's observations in memory and writes them
// once a second (Run), in one pipeline.
type Recorder struct {
	rdb redis.UniversalClient
	ns  string
	id  string
	sse func() int64
	log *slog.Logger
	clk clockwork.Clock

	mu      sync.Mutex
	pending map[slot]*pending
	dropped int64
}

// NewRecorder returns a Recorder for the deployment namespace ns. id names
// this instance (for example hostname:pid); sse returns its SSE connection
// count (nil: 0).
func NewRecorder(rdb redis.UniversalClient, ns, id string, sse func() int64, log *slog.Logger) *Recorder {
	if sse == nil {
		sse = func() int64 { return 0 }
	}
	return &Recorder{rdb: rdb, ns: ns, id: id, sse: sse, log: log, clk: clockwork.NewRealClock(), pending: map[slot]*pending{}}
}

// WithClock has the recorder stamp its observations and heartbeats and
// flush by clk, and returns the recorder. Call it before recording.
func (r *Recorder) WithClock(clk clockwork.Clock) *Recorder {
	r.clk = clk
	return r
}

// at returns the pending figures of room in the current second, or nil
// when the room's name is not valid or too many are pending. r.mu is held.
func (r *Recorder) at(roomName string) *pending {
	if !room.ValidName(roomName) {
		return nil
	}
	k := slot{roomName, r.clk.Now().Unix()}
	p := r.pending[k]
	if p == nil {
		if len(r.pending) >= maxPending {
			r.dropped++
			return nil
		}
		p = &pending{}
		r.pending[k] = p
	}
	return p
}

// ObserveOrder counts one order attempt in room: reason is "placed" or
// why it failed (salelog.Reason), took how long it took. It never blocks
// on Redis.
func (r *Recorder) ObserveOrder(roomName, reason string, took time.Duration) {
	if reason == "" || len(reason) > maxReasonLen {
		reason = "other"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.at(roomName)
	if p == nil {
		return
	}
	if reason == "placed" {
		p.placed++
	} else {
		if p.failed == nil {
			p.failed = map[string]int64{}
		}
		p.failed[reason]++
	}
	p.buckets[bucketOf(took)]++
}

// RecordTick keeps one admission tick's figures for room (the issuer's
// hook, see issuer.TickRecorder): the line, the pre-queue and the active
// passes as of the tick, the admissions it made and the rate as set. It
// never blocks on Redis.
func (r *Recorder) RecordTick(roomName string, a queue.Admission) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.at(roomName)
	if p == nil {
		return
	}
	p.tick = true
	p.waiting, p.prequeued, p.active, p.rate = a.Waiting, a.Prequeued, a.Active, a.Rate
	p.admitted += int64(len(a.Visitors))
}

// RecordIssuerFailure counts one failed admission tick or draw of room
// (the issuer's hook, see issuer.FailureRecorder). It never blocks on
// Redis.
func (r *Recorder) RecordIssuerFailure(roomName string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.at(roomName); p != nil {
		p.issuerFailed++
	}
}

// Flush writes what was observed since the last flush, in one pipeline:
// into each touched minute's hash, whose expiry it renews.
func (r *Recorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	batch := r.pending
	r.pending = map[slot]*pending{}
	dropped := r.dropped
	r.dropped = 0
	r.mu.Unlock()
	if dropped > 0 {
		r.log.Warn("livestats: observations dropped", "count", dropped)
	}
	if len(batch) == 0 {
		return nil
	}
	pipe := r.rdb.Pipeline()
	expire := map[string]bool{}
	for s, p := range batch {
		k := minuteKey(r.ns, s.room, s.sec)
		f := func(name string) string { return field(s.sec, name) }
		if p.tick {
			pipe.HSet(ctx, k, f(fWaiting), p.waiting, f(fPrequeued), p.prequeued, f(fActive), p.active,
				f(fRate), strconv.FormatFloat(p.rate, 'f', -1, 64))
		}
		if p.admitted > 0 {
			pipe.HIncrBy(ctx, k, f(fAdmitted), p.admitted)
		}
		if p.placed > 0 {
			pipe.HIncrBy(ctx, k, f(fPlaced), p.placed)
		}
		if p.issuerFailed > 0 {
			pipe.HIncrBy(ctx, k, f(fIssuerFailed), p.issuerFailed)
		}
		for why, n := range p.failed {
			pipe.HIncrBy(ctx, k, f(fFailed+why), n)
		}
		for i, n := range p.buckets {
			if n > 0 {
				pipe.HIncrBy(ctx, k, f(fBucket+strconv.Itoa(i)), n)
			}
		}
		expire[k] = true
	}
	for k := range expire {
		pipe.Expire(ctx, k, keepFor)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("livestats: flush: %w", err)
	}
	return nil
}

// Heartbeat writes this instance's SSE connection count and the time into
// the deployment's instances hash.
func (r *Recorder) Heartbeat(ctx context.Context) error {
	v := strconv.FormatInt(r.sse(), 10) + " " + strconv.FormatInt(r.clk.Now().UnixMilli(), 10)
	pipe := r.rdb.Pipeline()
	pipe.HSet(ctx, instancesKey(r.ns), r.id, v)
	pipe.Expire(ctx, instancesKey(r.ns), keepFor)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("livestats: heartbeat: %w", err)
	}
	return nil
}

// Run flushes and beats once a second until ctx is done, then flushes what
// is left and takes this instance off the list. Between beats it waits on
// one timer of its clock (see loop.Every).
func (r *Recorder) Run(ctx context.Context) {
	loop.Every(ctx, r.clk, time.Second, time.Second, func(ctx context.Context) {
		if err := r.Flush(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("livestats: flush", "err", err)
		}
		if err := r.Heartbeat(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("livestats: heartbeat", "err", err)
		}
	})
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := r.Flush(end); err != nil {
		r.log.Warn("livestats: last flush", "err", err)
	}
	r.rdb.HDel(end, instancesKey(r.ns), r.id)
}
