package adapt

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/histogram"
	"waitingroom/server/loop"
	"waitingroom/server/queue"
	"waitingroom/server/room"
)

// The health signal of the built-in order path. Every instance counts its
// order attempts per room and second in memory and adds them, every
// FlushEvery, to one Redis hash per room and second (HINCRBY in one
// pipeline: never a call per order). A second's hash expires after
// keepSeconds, so a room holds at most that many: O(1) memory per room,
// whatever the traffic. A Reader merges the last few seconds.

// Bounds are the upper bounds of the signal's latency histogram, finer
// than the dashboard's around the usual targets (tens to hundreds of ms).
var Bounds = [nBounds]time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond,
	50 * time.Millisecond, 75 * time.Millisecond, 100 * time.Millisecond, 150 * time.Millisecond, 200 * time.Millisecond,
	300 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond, time.Second,
	1500 * time.Millisecond, 2 * time.Second, 3 * time.Second, 5 * time.Second, 10 * time.Second}

// nBounds is len(Bounds); the histogram has one more, unbounded bucket.
const nBounds = 19

// FlushEvery is how often a Recorder writes what it counted.
const FlushEvery = 250 * time.Millisecond

// keepSeconds is how long a second's hash lives: the longest window a
// Reader reads, and a margin.
const keepSeconds = 15

// MaxWindow is the longest window a Reader merges, in seconds.
const MaxWindow = 10

// maxPending bounds the (room, second) entries a Recorder holds between
// flushes; beyond it observations are dropped (a flood of rooms cannot
// grow an instance's memory).
const maxPending = 4096

// Fields of a second's hash.
const (
	fShop   = "n"  // attempts that reached the shop (the histogram's count)
	fErrors = "e"  // of them, failures of the shop (Unhealthy)
	fFailed = "f:" // + reason: every failure, the shop's or not
	fBucket = "h"  // + histogram bucket index
	fSumUs  = "s"  // the attempts' summed latency, in microseconds (their exact mean)
	fSumN   = "sn" // the attempts summed in fSumUs (all of them, but an older instance's)
	fWaits  = "pw" // database pool waits (sql.DBStats.WaitCount deltas, all instances)
	fPool   = "p:" // + instance id: that instance's pool use, InUse/MaxOpen
	fLoad   = "ld" // the healthURL's load figure, polled in that second (health.go)
	fNoLoad = "lf" // the healthURL was polled in that second and gave no figure
)

// reachesShop reports whether an attempt that ended with reason (a
// salelog.Reason code, or "placed") reached the order database: token,
// request and order-bucket refusals happen before it, and say nothing of
// the shop's health.
func reachesShop(reason string) bool {
	switch reason {
	case "placed", "sold_out", "insufficient_stock", "unavailable", "other":
		return true
	}
	return false
}

// Unhealthy reports whether reason is a failure of the shop itself (the
// database did not answer, or an unknown error), which counts against the
// error budget; sold out is an answer, not a failure.
func Unhealthy(reason string) bool { return reason == "unavailable" || reason == "other" }

func signalKey(ns, roomName string, sec int64) string {
	return queue.RoomKey(ns, roomName, "sig:"+strconv.FormatInt(sec, 10))
}

type slot struct {
	room string
	sec  int64
}

type pending struct {
	shop, errors int64
	sumUs        int64
	failed       map[string]int64
	buckets      [nBounds + 1]int64
}

// PoolStats returns the order database pool's statistics (sql.DB.Stats).
type PoolStats func() sql.DBStats

// Recorder counts this instance's order attempts and writes them to Redis
// every FlushEvery (Run). It implements salelog's OrderObserver.
type Recorder struct {
	rdb  redis.UniversalClient
	ns   string
	id   string
	pool PoolStats
	log  *slog.Logger
	clk  clockwork.Clock

	mu sync.Mutex
	// tracked are the rooms whose orders are counted (Track); nil counts
	// every room.
	tracked  map[string]bool
	pending  map[slot]*pending
	dropped  int64
	waitsWas int64
}

// NewRecorder returns a Recorder for namespace ns; id names this instance
// (its pool figure), pool (nil: none) samples the order database's pool.
func NewRecorder(rdb redis.UniversalClient, ns, id string, pool PoolStats, log *slog.Logger) *Recorder {
	r := &Recorder{rdb: rdb, ns: ns, id: id, pool: pool, log: log, clk: clockwork.NewRealClock(), pending: map[slot]*pending{}}
	if pool != nil {
		r.waitsWas = pool().WaitCount
	}
	return r
}

// WithClock has the recorder stamp and flush by clk, and returns the
// recorder. Call it before Run.
func (r *Recorder) WithClock(clk clockwork.Clock) *Recorder {
	r.clk = clk
	return r
}

// Track has the recorder count the orders of rooms only, from now on
// (the Controller feeds it the adaptive rooms): a room that is not
// adaptive costs no Redis command.
func (r *Recorder) Track(rooms []string) {
	m := make(map[string]bool, len(rooms))
	for _, name := range rooms {
		m[name] = true
	}
	r.mu.Lock()
	r.tracked = m
	r.mu.Unlock()
}

// ObserveOrder counts one order attempt of room: reason is "placed" or why
// it failed (salelog.Reason), took how long Place took. It never blocks on
// Redis.
func (r *Recorder) ObserveOrder(roomName, reason string, took time.Duration) {
	r.ObserveOrders(roomName, reason, took, 1)
}

// ObserveOrders counts n attempts of room that ended alike, each taking
// took: a shop's answers reported in a summary (the gate middleware's),
// where one sampled duration stands for several answers. n < 1 counts
// nothing. It never blocks on Redis.
func (r *Recorder) ObserveOrders(roomName, reason string, took time.Duration, n int64) {
	if n < 1 || !room.ValidName(roomName) {
		return
	}
	if len(reason) > 32 || strings.ContainsAny(reason, " \n") {
		reason = "other"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tracked != nil && !r.tracked[roomName] {
		return
	}
	k := slot{roomName, r.clk.Now().Unix()}
	p := r.pending[k]
	if p == nil {
		if len(r.pending) >= maxPending {
			r.dropped += n
			return
		}
		p = &pending{}
		r.pending[k] = p
	}
	if reason != "placed" {
		if p.failed == nil {
			p.failed = map[string]int64{}
		}
		p.failed[reason] += n
	}
	if reachesShop(reason) {
		p.shop += n
		if Unhealthy(reason) {
			p.errors += n
		}
		p.buckets[histogram.Bucket(Bounds[:], took)] += n
		p.sumUs += n * took.Microseconds()
	}
}

// Flush writes what was counted since the last flush, in one pipeline: one
// HINCRBY per touched field and one EXPIRE per touched second. The pool's
// figures go to the rooms that had orders.
func (r *Recorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	batch := r.pending
	r.pending = map[slot]*pending{}
	dropped := r.dropped
	r.dropped = 0
	r.mu.Unlock()
	if dropped > 0 {
		r.log.Warn("adapt: signal observations dropped", "count", dropped)
	}
	if len(batch) == 0 {
		return nil
	}
	var waits int64
	use := ""
	if r.pool != nil {
		st := r.pool()
		waits, r.waitsWas = st.WaitCount-r.waitsWas, st.WaitCount
		if st.MaxOpenConnections > 0 {
			use = strconv.FormatFloat(float64(st.InUse)/float64(st.MaxOpenConnections), 'f', 3, 64)
		}
	}
	pipe := r.rdb.Pipeline()
	for s, p := range batch {
		k := signalKey(r.ns, s.room, s.sec)
		if p.shop > 0 {
			pipe.HIncrBy(ctx, k, fShop, p.shop)
		}
		if p.errors > 0 {
			pipe.HIncrBy(ctx, k, fErrors, p.errors)
		}
		for why, n := range p.failed {
			pipe.HIncrBy(ctx, k, fFailed+why, n)
		}
		for i, n := range p.buckets {
			if n > 0 {
				pipe.HIncrBy(ctx, k, fBucket+strconv.Itoa(i), n)
			}
		}
		if p.shop > 0 {
			pipe.HIncrBy(ctx, k, fSumUs, p.sumUs)
			pipe.HIncrBy(ctx, k, fSumN, p.shop)
		}
		if waits > 0 {
			pipe.HIncrBy(ctx, k, fWaits, waits)
		}
		if use != "" {
			pipe.HSet(ctx, k, fPool+r.id, use)
		}
		pipe.Expire(ctx, k, keepSeconds*time.Second)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("adapt: flush signal: %w", err)
	}
	return nil
}

// Run flushes every FlushEvery until ctx is done, then flushes what is
// left.
func (r *Recorder) Run(ctx context.Context) {
	loop.Every(ctx, r.clk, FlushEvery, FlushEvery, func(ctx context.Context) {
		if err := r.Flush(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("adapt: signal flush", "err", err)
		}
	})
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := r.Flush(end); err != nil {
		r.log.Warn("adapt: last signal flush", "err", err)
	}
}

// Signal is a room's order path health over a window of seconds, merged
// over every instance.
type Signal struct {
	// Seconds is the window's length.
	Seconds int
	// Secs are the window's seconds, oldest first (Reader fills them;
	// Last merges the newest few).
	Secs []Second
	// Samples counts the attempts that reached the shop; Errors, those of
	// them that failed (Unhealthy).
	Samples, Errors int64
	// P95 is their latency's p95, from the merged histogram; 0 without
	// samples.
	P95 time.Duration
	// Failed counts every failure by reason, the shop's or not.
	Failed map[string]int64
	// PoolWaits counts the order database pool's waits for a connection;
	// PoolUse is the highest InUse/MaxOpen an instance reported (0..1).
	PoolWaits int64
	PoolUse   float64
	// Load is the room's healthURL's last figure in the window, when
	// HasLoad: the latest poll of the window answered (1 or more:
	// overloaded). HasLoad is false without a healthURL, or when its
	// latest poll failed.
	Load    float64
	HasLoad bool
}

// Overloaded reports whether the room's healthURL says the shop is
// overloaded (Load >= 1).
func (s Signal) Overloaded() bool { return s.HasLoad && s.Load >= 1 }

// ErrorRate is Errors / Samples, 0 without samples.
func (s Signal) ErrorRate() float64 {
	if s.Samples == 0 {
		return 0
	}
	return float64(s.Errors) / float64(s.Samples)
}

// Reader reads a room's signal.
type Reader struct {
	rdb redis.UniversalClient
	ns  string
	clk clockwork.Clock
}

// NewReader returns a Reader for namespace ns.
func NewReader(rdb redis.UniversalClient, ns string) *Reader {
	return &Reader{rdb: rdb, ns: ns, clk: clockwork.NewRealClock()}
}

// WithClock has the reader take its seconds from clk, and returns the
// reader.
func (r *Reader) WithClock(clk clockwork.Clock) *Reader {
	r.clk = clk
	return r
}

// Landed is how long after a second's end the Reader takes it as
// complete: every instance's next flush (FlushEvery) and its round trip
// have landed. Read earlier, the newest second would lack up to a flush
// of orders, and look like a drop of throughput.
const Landed = FlushEvery + 100*time.Millisecond

// Read merges room's last window complete seconds (1..MaxWindow; the
// current second is still being written, and the one before it until
// Landed after its end), in one pipeline.
func (r *Reader) Read(ctx context.Context, roomName string, window int) (Signal, error) {
	window = min(max(window, 1), MaxWindow)
	now := r.clk.Now().Add(-Landed).Unix()
	pipe := r.rdb.Pipeline()
	cmds := make([]*redis.MapStringStringCmd, window)
	for i := range cmds {
		cmds[i] = pipe.HGetAll(ctx, signalKey(r.ns, roomName, now-int64(window)+int64(i)))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return Signal{}, fmt.Errorf("adapt: read signal %s: %w", roomName, err)
	}
	sig := Signal{Seconds: window, Secs: make([]Second, window)}
	for i, c := range cmds { // oldest first: the latest poll's figure stays
		sec := &sig.Secs[i]
		m := c.Val()
		if v, ok := m[fLoad]; ok {
			l, err := strconv.ParseFloat(v, 64)
			sig.Load, sig.HasLoad = l, err == nil
		} else if _, ok := m[fNoLoad]; ok {
			sig.Load, sig.HasLoad = 0, false
		}
		for f, v := range m {
			if f == fLoad || f == fNoLoad {
				continue
			}
			if strings.HasPrefix(f, fPool) {
				if u, err := strconv.ParseFloat(v, 64); err == nil {
					sig.PoolUse = max(sig.PoolUse, u)
				}
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				continue
			}
			switch {
			case f == fShop:
				sec.Samples += n
			case f == fErrors:
				sec.Errors += n
			case f == fSumUs:
				sec.SumUs += n
			case f == fSumN:
				sec.SumN += n
			case f == fWaits:
				sig.PoolWaits += n
			case strings.HasPrefix(f, fFailed):
				if sig.Failed == nil {
					sig.Failed = map[string]int64{}
				}
				sig.Failed[f[len(fFailed):]] += n
			case strings.HasPrefix(f, fBucket):
				if i, err := strconv.Atoi(f[len(fBucket):]); err == nil && i >= 0 && i < len(sec.Hist) {
					sec.Hist[i] += n
				}
			}
		}
	}
	return sig.Last(window), nil
}

// Second is one second of a room's signal: the attempts that reached the
// shop, those that failed, their latency histogram (Bounds), and the
// summed latency in microseconds of SumN of them (all, unless an instance
// of an older release, which keeps no sum, counted some).
type Second struct {
	Samples, Errors int64
	Hist            [nBounds + 1]int64
	SumUs, SumN     int64
}

// Mean is the exact mean latency of the attempts summed (0 without any).
// Unlike a quantile of the histogram, it is not limited by the buckets'
// width: a queue of a few orders shows in it.
func (s Second) Mean() time.Duration {
	if s.SumN <= 0 {
		return 0
	}
	return time.Duration(s.SumUs/s.SumN) * time.Microsecond
}

// Last returns the signal of the newest n seconds of s's window (all of
// it if n is not shorter, or if s has no per-second breakdown): Seconds,
// Secs, Samples, Errors and P95 are those of the n seconds; the other
// fields (failures by reason, the pool's figures) stay the whole window's.
func (s Signal) Last(n int) Signal {
	if len(s.Secs) == 0 || n <= 0 {
		return s
	}
	if n < len(s.Secs) {
		s.Secs = s.Secs[len(s.Secs)-n:]
	}
	s.Seconds = len(s.Secs)
	var hist [nBounds + 1]int64
	s.Samples, s.Errors = 0, 0
	for _, sec := range s.Secs {
		s.Samples += sec.Samples
		s.Errors += sec.Errors
		for i, c := range sec.Hist {
			hist[i] += c
		}
	}
	s.P95 = histogram.Quantile(Bounds[:], hist[:], 0.95)
	return s
}
