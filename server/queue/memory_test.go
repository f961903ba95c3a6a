package queue

import (
	"context"
	"sync"
	"testing"
)

// TestMemoryPerWaitingVisitor keeps a waiting visitor within the 200-byte
// budget: the line, the liveness cells and the room's other keys, measured
// with MEMORY USAGE over every key of the room.
func TestMemoryPerWaitingVisitor(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 enters")
	}
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(nil))
	const n = 20000
	vs := visitors(t, n)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				if _, err := e.Enter(ctx, name, vs[i]); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	keys, err := rdb.Keys(ctx, testKeys(rdb, name).prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, k := range keys {
		b, err := rdb.MemoryUsage(ctx, k, 0).Result()
		if err != nil {
			t.Fatal(err)
		}
		total += b
	}
	per := float64(total) / n
	t.Logf("%d waiting visitors: %.1f bytes each over %d keys", n, per, len(keys))
	if per > 200 {
		t.Fatalf("%.1f bytes per waiting visitor, over the 200-byte budget", per)
	}
}
