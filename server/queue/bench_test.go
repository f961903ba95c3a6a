package queue

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/visitor"
)

// BenchmarkEnter measures the enter script for new visitors, from many
// goroutines over one client pool.
func BenchmarkEnter(b *testing.B) {
	rdb := servicetest.Redis(b)
	name := servicetest.RoomName(b, rdb)
	e := New(rdb, DefaultNamespace(rdb))
	if err := e.SaveRoom(context.Background(), name, room.Defaults(name)); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			id, _ := visitor.NewID()
			if _, err := e.Enter(ctx, name, id); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAdmit measures one admission tick of a 50-visitor batch (the
// seeds' rate at a 1 s tick) from a deep line.
func BenchmarkAdmit(b *testing.B) {
	rdb := servicetest.Redis(b)
	name := servicetest.RoomName(b, rdb)
	e := New(rdb, DefaultNamespace(rdb))
	s := room.Defaults(name)
	s.Rate = room.MaxRate
	if err := e.SaveRoom(context.Background(), name, s); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	const batch = 50
	k := testKeys(rdb, name)
	need := b.N*batch + batch
	for start := 0; start < need; start += 10000 {
		pipe := rdb.Pipeline()
		for i := start; i < min(start+10000, need); i++ {
			id, _ := visitor.NewID()
			pipe.ZAdd(ctx, k.key("queue"), redis.Z{Score: float64(i + 1), Member: id})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	rdb.Set(ctx, k.key("seq"), strconv.Itoa(need), 0)
	toks := tokens(b, batch)
	e.Admit(ctx, name, time.Second, nil)
	time.Sleep(10 * time.Millisecond)
	b.ResetTimer()
	admitted := 0
	for range b.N {
		a, err := e.Admit(ctx, name, time.Second, toks)
		if err != nil {
			b.Fatal(err)
		}
		admitted += len(a.Visitors)
	}
	b.StopTimer()
	b.ReportMetric(float64(admitted)/float64(b.N), "admitted/op")
}
