package queue

import (
	"context"
	"testing"
	"time"

	"waitingroom/server/room"
)

// TestAdmissionReportsFlags: a tick reports the room's paused and sold-out
// flags (the per-room gauges of /metrics come from them), and still admits
// the visitors it returns after them.
func TestAdmissionReportsFlags(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name            string
		paused, soldOut bool
		admitted        int
	}{
		{"open", false, false, 2},
		{"paused", true, false, 0},
		{"sold out", false, true, 0},
		{"paused and sold out", true, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.Paused = tc.paused }))
			if err := e.SetSoldOut(ctx, name, tc.soldOut); err != nil {
				t.Fatal(err)
			}
			for _, v := range visitors(t, 2) {
				if _, err := e.Enter(ctx, name, v); err != nil {
					t.Fatal(err)
				}
			}
			a := admitAfter(t, e, name, 50*time.Millisecond, time.Second, 2)
			if a.Paused != tc.paused || a.SoldOut != tc.soldOut {
				t.Errorf("Admission paused=%v soldOut=%v, want %v %v", a.Paused, a.SoldOut, tc.paused, tc.soldOut)
			}
			if len(a.Visitors) != tc.admitted {
				t.Errorf("admitted %d (%q), want %d", len(a.Visitors), a.Visitors, tc.admitted)
			}
			for _, v := range a.Visitors {
				if len(v) < 16 {
					t.Errorf("admitted visitor %q is not a visitor id: the reply's flags leaked into the list", v)
				}
			}
		})
	}
}
