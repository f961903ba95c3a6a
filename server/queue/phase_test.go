package queue

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"waitingroom/server/servicetest"
)

// TestMarkPhase: each mark returns the phase before it, and of many
// callers marking a new phase at once exactly one sees the old one.
func TestMarkPhase(t *testing.T) {
	rdb := servicetest.Redis(t)
	name := servicetest.RoomName(t, rdb)
	e := New(rdb, DefaultNamespace(rdb))
	ctx := context.Background()
	for _, tc := range []struct{ mark, want string }{
		{PhaseScheduled, ""},
		{PhaseScheduled, PhaseScheduled},
		{PhasePrequeue, PhaseScheduled},
		{PhaseOpen, PhasePrequeue},
	} {
		if old, err := e.MarkPhase(ctx, name, tc.mark); err != nil || old != tc.want {
			t.Fatalf("mark %s: old %q %v, want %q", tc.mark, old, err, tc.want)
		}
	}
	var changed atomic.Int64
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			old, err := e.MarkPhase(ctx, name, PhaseClosed)
			if err != nil {
				t.Error(err)
			}
			if old != PhaseClosed {
				changed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := changed.Load(); n != 1 {
		t.Fatalf("%d callers saw the change, want 1", n)
	}
}
