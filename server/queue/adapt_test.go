package queue

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
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
			e, name, _ := newAdaptiveRoom(t, settings(func(s *room.Settings) {
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

// TestApplyAdapt: the script takes a decision only from a fresh read
// (the count and the rate unchanged), at least MinGap after the last one
// by Redis TIME, and only in an adaptive room.
func TestApplyAdapt(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newAdaptiveRoom(t, settings(func(s *room.Settings) {
		s.Adapt = room.Adapt{Adaptive: true, MinRate: 1, MaxRate: 100, TargetP95Ms: 300, MaxErrorRate: 0.05}
		s.Rate = 10
	}))
	gap := 200 * time.Millisecond
	apply := func(n int64, from, to float64, wantOK bool, wantWhy string) {
		t.Helper()
		ok, why, err := e.ApplyAdapt(ctx, name, AdaptDecision{N: n, From: from, To: to, Reason: "increase", MinGap: gap})
		if err != nil || ok != wantOK || why != wantWhy {
			t.Fatalf("apply n=%d %g→%g: %v %q %v, want %v %q", n, from, to, ok, why, err, wantOK, wantWhy)
		}
	}
	apply(0, 10, 12, true, "")
	apply(0, 10, 12, false, "stale") // read before the first: refused
	apply(1, 10, 12, false, "stale") // the count is fresh, the rate is not
	apply(1, 12, 14, false, "early") // fresh, but within the gap
	time.Sleep(gap)
	apply(1, 12, 14, true, "")
	rs, err := e.AdaptRooms(ctx, []string{name})
	if r := rs[name]; err != nil || r.Rate != 14 || r.N != 2 || r.LastReason != "increase" || time.Since(r.Last) > time.Minute {
		t.Fatalf("state %+v %v, want rate 14 after 2 decisions", r, err)
	}
	// A cut keeps its time, the knee and the no-load p95 for the next
	// decision, whichever instance takes it.
	time.Sleep(gap)
	ok, _, err := e.ApplyAdapt(ctx, name, AdaptDecision{N: 2, From: 14, To: 12, Reason: "cut_latency", MinGap: gap,
		Knee: 13.5, Base: 42 * time.Millisecond, Cut: true})
	if err != nil || !ok {
		t.Fatalf("a cut: %v %v", ok, err)
	}
	rs, err = e.AdaptRooms(ctx, []string{name})
	if r := rs[name]; err != nil || r.Knee != 13.5 || r.Base != 42*time.Millisecond || r.LastCut.IsZero() || !r.LastCut.Equal(r.Last) {
		t.Fatalf("state %+v %v, want knee 13.5, base 42ms, the cut's time", r, err)
	}
	time.Sleep(gap)
	apply(3, 12, 13, true, "") // not a cut: the last cut's time stays
	rs, _ = e.AdaptRooms(ctx, []string{name})
	if r := rs[name]; r.LastCut.Equal(r.Last) || r.LastCut.IsZero() || r.Knee != 0 {
		t.Fatalf("state %+v, want the cut's time kept, the knee as decided (none)", r)
	}
	s, _ := e.Room(ctx, name)
	s.Adaptive = false
	if err := e.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	time.Sleep(gap)
	apply(4, 13, 16, false, "off")
}

// newAdaptiveRoom is newRoom in a namespace of the test's own: every
// running server's controller decides for the adaptive rooms of its
// namespace, and would take this test's decisions otherwise.
func newAdaptiveRoom(t *testing.T, s room.Settings) (*Engine, string, redis.UniversalClient) {
	t.Helper()
	rdb := servicetest.Redis(t)
	name := servicetest.RoomName(t, rdb)
	e := New(rdb, "wr:adapt-test:"+name)
	if err := e.SaveRoom(context.Background(), name, s); err != nil {
		t.Fatal(err)
	}
	if a, err := e.Admit(context.Background(), name, time.Second, nil); err != nil || len(a.Visitors) != 0 {
		t.Fatalf("priming tick: %+v %v", a, err)
	}
	return e, name, rdb
}

// TestAdaptRoomsOrderCeiling: the controller reads as its maxRate the
// room's orderRate when it is lower and the room's orders go through the
// order bucket (room.Adapt.Ceiling), and says so.
func TestAdaptRoomsOrderCeiling(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		mut       func(*room.Settings)
		wantMax   float64
		wantOrder bool
	}{
		{"orderRate below maxRate", func(s *room.Settings) { s.OrderRate = 40 }, 40, true},
		{"orderRate above maxRate", func(s *room.Settings) { s.OrderRate = 400 }, 100, false},
		{"a gate room", func(s *room.Settings) { s.OrderRate = 40; s.Gate.TargetURL = "https://shop.example/" }, 100, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, name, _ := newAdaptiveRoom(t, settings(func(s *room.Settings) {
				s.Adapt = room.Adapt{Adaptive: true, MinRate: 1, MaxRate: 100, TargetP95Ms: 300, MaxErrorRate: 0.05}
				s.Rate = 10
				tc.mut(s)
			}))
			rs, err := e.AdaptRooms(ctx, []string{name})
			if r := rs[name]; err != nil || r.Adapt.MaxRate != tc.wantMax || r.ByOrders != tc.wantOrder || r.Adapt.MinRate != 1 {
				t.Fatalf("read %+v %v, want maxRate %g, by orders %v", r, err, tc.wantMax, tc.wantOrder)
			}
		})
	}
}
