package queue

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// BenchmarkDraw1M draws a pre-queue of 1,000,000 buyers on real Redis and
// reports the draw's wall time, its longest single Redis call as Redis
// timed it (SLOWLOG, set for the draw to log every call of 1 ms or more:
// 0 means none took 1 ms), the number of its calls over the 20 ms
// target, and the slowest round trip as the client saw it:
//
//	go test ./server/queue -run '^$' -bench BenchmarkDraw1M -benchtime 1x
func BenchmarkDraw1M(b *testing.B) {
	const n = 1000000
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		rdb := servicetest.Redis(b)
		name := servicetest.RoomName(b, rdb)
		hook := &maxLatency{}
		e := New(rdb, DefaultNamespace(rdb))
		s := room.Defaults(name)
		s.PrequeueAt, s.OpensAt = at(-time.Hour), at(time.Hour)
		if err := e.SaveRoom(ctx, name, s); err != nil {
			b.Fatal(err)
		}
		fillPrequeue(b, rdb, name, n)
		s.OpensAt = at(-time.Millisecond)
		if err := e.SaveRoom(ctx, name, s); err != nil {
			b.Fatal(err)
		}
		const logLen = 10000
		slowlogFrom(b, rdb, time.Millisecond, logLen)
		if c, ok := rdb.(*redis.Client); ok {
			c.AddHook(hook)
		}
		b.StartTimer()
		start := time.Now()
		st, err := e.Draw(ctx, name, DrawOptions{})
		took := time.Since(start)
		b.StopTimer()
		if err != nil || st != DrawDone {
			b.Fatalf("draw: %v %v", st, err)
		}
		var slowest time.Duration
		over := 0
		logged := roomSlowlog(b, rdb, name, logLen)
		for _, l := range logged {
			if l.Duration > slowest {
				slowest = l.Duration
				b.Logf("slowest so far: %v %.120s", l.Duration, strings.Join(l.Args, " "))
			}
			if l.Duration > 20*time.Millisecond {
				over++
			}
		}
		b.Logf("%d calls of the draw took 1 ms or more", len(logged))
		b.ReportMetric(took.Seconds(), "s/draw")
		b.ReportMetric(float64(slowest.Microseconds())/1000, "ms-slowest-redis-call")
		b.ReportMetric(float64(over), "calls-over-20ms")
		b.ReportMetric(float64(hook.max.Load())/1e6, "ms-slowest-round-trip")
		servicetest.DropRoom(rdb, name)
	}
}

// maxLatency records the longest command round trip seen by the client,
// Go's side included: an upper bound of the time Redis spent on it.
type maxLatency struct{ max atomic.Int64 }

func (h *maxLatency) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *maxLatency) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		d := int64(time.Since(start))
		for {
			cur := h.max.Load()
			if d <= cur || h.max.CompareAndSwap(cur, d) {
				return err
			}
		}
	}
}

func (h *maxLatency) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
