package queue

import (
	"context"
	"testing"
	"time"

	"waitingroom/server/room"
)

// TestRateZeroIsAPause: an adaptive room whose controller took the rate
// to 0 (minRate 0) admits nobody and says paused everywhere a page looks
// (the tick's event, a poll, an instance's snapshot), with no ETA; at any
// other rate, as set, it is not paused.
func TestRateZeroIsAPause(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		rate   float64
		paused bool
	}{{"rate 0", 0, true}, {"a small rate", 0.01, false}} {
		t.Run(tc.name, func(t *testing.T) {
			e, name, _ := newRoom(t, settings(func(s *room.Settings) {
				s.Adapt = room.Adapt{Adaptive: true, MinRate: 0, MaxRate: 100, TargetP95Ms: 300, MaxErrorRate: 0.05}
				s.Rate = tc.rate
			}))
			vs := visitors(t, 3)
			for _, v := range vs {
				if _, err := e.Enter(ctx, name, v); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(10 * time.Millisecond)
			a, err := e.Admit(ctx, name, time.Second, []string{"t1", "t2", "t3"})
			if err != nil || a.Paused != tc.paused || tc.paused && len(a.Visitors) != 0 {
				t.Fatalf("tick: paused %v, %d admitted, %v; want paused %v", a.Paused, len(a.Visitors), err, tc.paused)
			}
			p, err := e.Position(ctx, name, vs[2])
			if err != nil || p.Paused != tc.paused || tc.paused && p.EstimatedWaitSeconds != nil {
				t.Fatalf("poll: %+v %v, want paused %v without ETA", p, err, tc.paused)
			}
			snap, err := e.Snapshot(ctx, name)
			if err != nil || snap.Paused != tc.paused {
				t.Fatalf("snapshot: paused %v %v, want %v", snap.Paused, err, tc.paused)
			}
		})
	}
}
