package queue

import (
	"context"
	"fmt"
	"testing"
	"time"

	"waitingroom/server/room"
)

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
