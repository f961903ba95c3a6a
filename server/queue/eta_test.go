package queue

import (
	"context"
	"testing"
	"time"

	"waitingroom/server/room"
)

// TestETATellsTheTruth checks the throughput the ETA counts on: the rate,
// followed at once when it changes; the rate at which slots free up when
// maxActive binds (a pass held for its whole TTL until releases say
// otherwise); and no ETA at all while paused.
func TestETATellsTheTruth(t *testing.T) {
	ctx := context.Background()
	eta := func(t *testing.T, e *Engine, name, v string) *int64 {
		t.Helper()
		p, err := e.Position(ctx, name, v)
		if err != nil || p.Status != StatusWaiting {
			t.Fatalf("position %+v %v", p, err)
		}
		return p.EstimatedWaitSeconds
	}
	want := func(t *testing.T, what string, got *int64, w int64) {
		t.Helper()
		if got == nil || *got != w {
			t.Fatalf("%s: ETA %v, want %d s", what, got, w)
		}
	}

	t.Run("rate change", func(t *testing.T) {
		s := settings(func(s *room.Settings) { s.Rate = 10 })
		e, name, _ := newRoom(t, s)
		vs := visitors(t, 100)
		for _, v := range vs {
			e.Enter(ctx, name, v)
		}
		// A measured rate from the old setting must not linger.
		for range 3 {
			admitAfter(t, e, name, 1100*time.Millisecond, time.Second, 20)
		}
		last := vs[len(vs)-1]
		p, _ := e.Position(ctx, name, last)
		s.Rate = 1
		if err := e.SaveRoom(ctx, name, s); err != nil {
			t.Fatal(err)
		}
		want(t, "after 10/s -> 1/s", eta(t, e, name, last), p.Rank+1)
	})

	t.Run("between ticks", func(t *testing.T) {
		// Read 600 ms after the last tick (at most a tick): the next is 400
		// ms away, and admits ranks 0-9 at 10/s.
		e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 10; s.AbandonAfterSeconds = 0 }))
		vs := visitors(t, 30)
		for _, v := range vs {
			e.Enter(ctx, name, v)
		}
		now, err := rdb.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		e.admitNow = func() time.Time { return now.Add(-600 * time.Millisecond) }
		if a, err := e.Admit(ctx, name, time.Second, tokens(t, 20)); err != nil || len(a.Visitors) != 0 {
			t.Fatalf("tick: %+v %v, want no credit", a, err)
		}
		want(t, "rank 10, admitted in 1.4 s", eta(t, e, name, vs[10]), 1)
		want(t, "rank 25, admitted in 2.4 s", eta(t, e, name, vs[25]), 2)
	})

	t.Run("maxActive binds", func(t *testing.T) {
		e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Rate = 100; s.MaxActive = 2; s.TokenTTLSeconds = 10 }))
		vs := visitors(t, 7)
		for _, v := range vs {
			e.Enter(ctx, name, v)
		}
		// Two slots, each held up to 10 s: the 7th in line goes in at 30 s.
		want(t, "unmeasured", eta(t, e, name, vs[6]), 30)
		a := admitAfter(t, e, name, 110*time.Millisecond, 100*time.Millisecond, 7)
		if len(a.Visitors) != 2 {
			t.Fatalf("admitted %d, want the 2 slots", len(a.Visitors))
		}
		// Both passes are given up at once: slots free in about 0 s, so
		// the rate binds again.
		for _, v := range a.Visitors {
			e.Leave(ctx, name, v)
		}
		admitAfter(t, e, name, 30*time.Millisecond, 100*time.Millisecond, 0)
		want(t, "measured fast releases", eta(t, e, name, vs[6]), 1)
	})

	t.Run("nobody admitted", func(t *testing.T) {
		s := settings(nil)
		e, name, _ := newRoom(t, s)
		v := visitors(t, 1)[0]
		e.Enter(ctx, name, v)
		s.Mode = room.ModeClosed
		if err := e.SaveRoom(ctx, name, s); err != nil {
			t.Fatal(err)
		}
		if got := eta(t, e, name, v); got != nil {
			t.Fatalf("mode closed: ETA %d s, want none", *got)
		}
	})

	t.Run("paused", func(t *testing.T) {
		e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Paused = true }))
		v := visitors(t, 1)[0]
		p, err := e.Enter(ctx, name, v)
		if err != nil || !p.Paused || p.EstimatedWaitSeconds != nil {
			t.Fatalf("paused: %+v %v, want paused and no ETA", p, err)
		}
	})
}
