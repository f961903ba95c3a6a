package queue

import (
	"context"
	"strings"
	"testing"
	"time"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// BenchmarkDraw1M draws a pre-queue of 1,000,000 buyers on real Redis and
// reports the draw's wall time and its slowest Redis call:
//
//	go test ./server/queue -run '^$' -bench BenchmarkDraw1M -benchtime 1x
func BenchmarkDraw1M(b *testing.B) {
	const n = 1000000
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		rdb := servicetest.Redis(b)
		name := servicetest.RoomName(b, rdb)
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
		var slowest time.Duration
		last := int64(-1)
		if l, err := rdb.SlowLogGet(ctx, 1).Result(); err == nil && len(l) > 0 {
			last = l[0].ID
		}
		b.StartTimer()
		start := time.Now()
		st, err := e.Draw(ctx, name, DrawOptions{})
		took := time.Since(start)
		b.StopTimer()
		if err != nil || st != DrawDone {
			b.Fatalf("draw: %v %v", st, err)
		}
		logs, _ := rdb.SlowLogGet(ctx, 128).Result()
		for _, l := range logs {
			if l.ID > last && l.Duration > slowest && containsRoom(l.Args, name) {
				slowest = l.Duration
			}
		}
		b.ReportMetric(took.Seconds(), "s/draw")
		b.ReportMetric(float64(slowest.Microseconds())/1000, "ms-slowest-logged-call")
		servicetest.DropRoom(rdb, name)
	}
}

func containsRoom(args []string, name string) bool {
	for _, a := range args {
		if len(a) < 200 && strings.Contains(a, "{"+name+"}") {
			return true
		}
	}
	return false
}
