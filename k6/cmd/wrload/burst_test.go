package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"waitingroom/k6"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// TestBurstSmoke runs a tiny flash sale with the burst tool against a real
// server: 12 buyers for 10 items, in both modes.
func TestBurstSmoke(t *testing.T) {
	srv := startServer(t, 200*time.Millisecond)
	for _, mode := range []string{room.ModeQueue, room.ModePassthrough} {
		t.Run(mode, func(t *testing.T) {
			name := testRoom(t, srv, 20)
			if err := k6.PutRoom(context.Background(), srv.base, name, testAdmin, map[string]any{"mode": mode}); err != nil {
				t.Fatal(err)
			}
			srv.addProduct(t, name, "smoke", 1000, 10)
			var progress servicetest.SyncBuffer
			rep, err := k6.Burst{URLs: []string{srv.base}, Room: name, N: 12, Within: 300 * time.Millisecond,
				Timeout: 30 * time.Second, SourceIPs: 4, Progress: &progress, ProgressEvery: 50 * time.Millisecond}.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(progress.String(), "of 12 entered"); n < 3 {
				t.Fatalf("%d progress lines, want 3 or more (one every 50 ms):\n%s", n, progress.String())
			}
			s := k6.Summarise(rep)
			t.Log(s.String())
			soldOut := s.Status[http.StatusConflict] + s.Status[http.StatusGone]
			if s.Buyers != 12 || s.Ordered != 10 || soldOut != 2 || s.OrderP95 <= 0 {
				t.Fatalf("summary %+v: want 10 orders and 2 sold out", s)
			}
			if mode == room.ModeQueue && s.AdmissionMax < 300*time.Millisecond {
				t.Fatalf("at 20/s, 12 buyers cannot all be in within %v", s.AdmissionMax)
			}
		})
	}
}

func TestSteadyRate(t *testing.T) {
	sec := func(adm ...float64) []k6.Second {
		out := make([]k6.Second, len(adm))
		for i, a := range adm {
			out[i] = k6.Second{T: i, Admitted: a}
		}
		return out
	}
	tests := []struct {
		name string
		tl   []k6.Second
		want float64
	}{
		{"partial edges left out", sec(0, 12, 50, 49, 51, 50, 7, 0), 50},
		{"too short to tell", sec(0, 50, 50, 0), 0},
		{"nothing admitted", sec(0, 0, 0), 0},
	}
	for _, tt := range tests {
		if got := steadyRate(tt.tl); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
