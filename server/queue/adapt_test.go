package queue

import (
	"context"
	"fmt"
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
			clockOf(t, e).Advance(10 * time.Millisecond)
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
// by the engine's clock, and only in an adaptive room.
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
	clockOf(t, e).Advance(gap)
	apply(1, 12, 14, true, "")
	rs, err := e.AdaptRooms(ctx, []string{name})
	if r := rs[name]; err != nil || r.Rate != 14 || r.N != 2 || r.LastReason != "increase" || !r.Last.Equal(clockOf(t, e).Now().Truncate(time.Millisecond)) {
		t.Fatalf("state %+v %v, want rate 14 after 2 decisions", r, err)
	}
	// A cut keeps its time, the knee and the no-load p95 for the next
	// decision, whichever instance takes it.
	clockOf(t, e).Advance(gap)
	ok, _, err := e.ApplyAdapt(ctx, name, AdaptDecision{N: 2, From: 14, To: 12, Reason: "cut_latency", MinGap: gap,
		Knee: 13.5, Base: 42 * time.Millisecond, Cut: true})
	if err != nil || !ok {
		t.Fatalf("a cut: %v %v", ok, err)
	}
	rs, err = e.AdaptRooms(ctx, []string{name})
	if r := rs[name]; err != nil || r.Knee != 13.5 || r.Base != 42*time.Millisecond || r.LastCut.IsZero() || !r.LastCut.Equal(r.Last) {
		t.Fatalf("state %+v %v, want knee 13.5, base 42ms, the cut's time", r, err)
	}
	clockOf(t, e).Advance(gap)
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
	clockOf(t, e).Advance(gap)
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
	useClock(t, e, rdb)
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

// TestAdaptHistory: a decision that changes the rate, or whose reason is
// not the last one's, is kept in the room's history with its signal; a
// hold that repeats its reason is not (a hold is explained once).
func TestAdaptHistory(t *testing.T) {
	ctx := context.Background()
	type step struct {
		to     float64
		reason string
	}
	for _, tc := range []struct {
		name  string
		steps []step
		want  []step // newest first
	}{
		{"changes are kept", []step{{12, "increase"}, {14, "increase"}, {9.8, "cut_latency"}},
			[]step{{9.8, "cut_latency"}, {14, "increase"}, {12, "increase"}}},
		{"a repeated hold is kept once", []step{{10, "hold_short_line"}, {10, "hold_short_line"}, {10, "hold_short_line"}},
			[]step{{10, "hold_short_line"}}},
		{"a new reason is kept, even without a change", []step{{10, "hold_no_signal"}, {10, "hold_no_signal"}, {10, "hold_pool"}, {12, "increase"}, {12, "hold_max"}},
			[]step{{12, "hold_max"}, {12, "increase"}, {10, "hold_pool"}, {10, "hold_no_signal"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, name, _ := newAdaptiveRoom(t, settings(func(s *room.Settings) {
				s.Adapt = room.Adapt{Adaptive: true, MinRate: 1, MaxRate: 100, TargetP95Ms: 300, MaxErrorRate: 0.05}
				s.Rate = 10
			}))
			before := time.Now().Add(-time.Minute)
			from := 10.0
			for i, st := range tc.steps {
				ok, why, err := e.ApplyAdapt(ctx, name, AdaptDecision{N: int64(i), From: from, To: st.to, Reason: st.reason,
					P95: time.Duration(100+i) * time.Millisecond, ErrorRate: 0.0125, Samples: int64(40 + i)})
				if err != nil || !ok {
					t.Fatalf("apply %d: %v %q %v", i, ok, why, err)
				}
				from = st.to
			}
			got, err := e.AdaptHistory(ctx, name, 50)
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("history %+v %v, want %d entries", got, err, len(tc.want))
			}
			for i, c := range got {
				if c.To != tc.want[i].to || c.Reason != tc.want[i].reason || c.ErrorRate != 0.0125 ||
					c.P95 < 100*time.Millisecond || c.Samples < 40 || c.At.Before(before) || c.At.After(time.Now().Add(time.Minute)) {
					t.Fatalf("entry %d = %+v, want %+v with its signal", i, c, tc.want[i])
				}
				if i+1 < len(got) && c.From != got[i+1].To {
					t.Fatalf("entry %d starts from %g, the one before ended at %g", i, c.From, got[i+1].To)
				}
			}
		})
	}
}

// TestAdaptHistoryBounded: the history keeps the last AdaptHistoryLen
// changes, a read returns at most what it asks, and deleting the room
// deletes it.
func TestAdaptHistoryBounded(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newAdaptiveRoom(t, settings(func(s *room.Settings) {
		s.Adapt = room.Adapt{Adaptive: true, MinRate: 1, MaxRate: 1000, TargetP95Ms: 300, MaxErrorRate: 0.05}
		s.Rate = 1
	}))
	total := AdaptHistoryLen + 20
	for i := range total {
		if ok, why, err := e.ApplyAdapt(ctx, name, AdaptDecision{N: int64(i), From: float64(1 + i), To: float64(2 + i), Reason: "increase"}); err != nil || !ok {
			t.Fatalf("apply %d: %v %q %v", i, ok, why, err)
		}
	}
	key := roomKeys(e.ns, name).key("adapthist")
	if n, err := rdb.LLen(ctx, key).Result(); err != nil || n != AdaptHistoryLen {
		t.Fatalf("history holds %d %v, want %d", n, err, AdaptHistoryLen)
	}
	for _, tc := range []struct{ ask, want int }{{0, 0}, {1, 1}, {50, 50}, {AdaptHistoryLen + 100, AdaptHistoryLen}} {
		t.Run(fmt.Sprint(tc.ask), func(t *testing.T) {
			got, err := e.AdaptHistory(ctx, name, tc.ask)
			if err != nil || len(got) != tc.want {
				t.Fatalf("AdaptHistory(%d): %d entries %v, want %d", tc.ask, len(got), err, tc.want)
			}
			if tc.want > 0 && got[0].To != float64(total+1) {
				t.Fatalf("newest entry %+v, want the rate %d", got[0], total+1)
			}
		})
	}
	if _, err := e.DeleteRoom(ctx, name); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.Exists(ctx, key).Result(); err != nil || n != 0 {
		t.Fatalf("history after delete: exists %d %v", n, err)
	}
}

// TestParseAdaptChange: an entry that does not parse is left out.
func TestParseAdaptChange(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"1700000000000 10 12 250 0.0100 42 increase", true},
		{"1700000000000 10 12 250 0.0100 42", false},
		{"x 10 12 250 0.0100 42 increase", false},
		{"1700000000000 10 twelve 250 0.0100 42 increase", false},
		{"", false},
	} {
		c, ok := parseAdaptChange(tc.in)
		if ok != tc.ok || ok && (c.To != 12 || c.P95 != 250*time.Millisecond || c.Reason != "increase" || c.At.UnixMilli() != 1700000000000) {
			t.Errorf("parseAdaptChange(%q) = %+v %v, want ok %v", tc.in, c, ok, tc.ok)
		}
	}
}
