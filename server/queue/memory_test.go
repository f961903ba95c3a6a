package queue

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestMemoryPerWaitingVisitor keeps a waiting visitor within the 200-byte
// budget: the line, the liveness cells and the room's other keys, measured
// with MEMORY USAGE over every key of the room. A visitor who joined by a
// campaign link also holds its campaign's short id while waiting
// (ATTRIBUTION: a 2-byte cell, like the liveness cells), within the same
// budget (see BENCHMARKS.md).
func TestMemoryPerWaitingVisitor(t *testing.T) {
	for _, tc := range []struct {
		name   string
		c      func(i int) Campaign
		budget float64
	}{
		{"direct", func(int) Campaign { return Campaign{} }, 200},
		{"campaigns", func(i int) Campaign {
			return Campaign{Source: "newsletter", Medium: "email", Campaign: fmt.Sprint("spring-sale-", i%50)}
		}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) { memoryPerWaitingVisitor(t, tc.c, tc.budget) })
	}
}

func memoryPerWaitingVisitor(t *testing.T, campaign func(i int) Campaign, budget float64) {
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
				if _, err := e.EnterFrom(ctx, name, vs[i], "", campaign(i)); err != nil {
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
	if per > budget {
		t.Fatalf("%.1f bytes per waiting visitor, over the %.0f-byte budget", per, budget)
	}
}
