package main

import (
	"context"
	"testing"
	"time"

	"waitingroom/k6"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// TestSoakSmoke runs the soak tool briefly, in both modes, against a real
// server on loopback: tiny N, a couple of seconds.
func TestSoakSmoke(t *testing.T) {
	base, eng, rdb := startServer(t, 200*time.Millisecond)
	tests := []struct {
		name string
		poll bool
	}{{"sse", false}, {"poll", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := servicetest.RoomName(t, rdb)
			set := room.Defaults(name)
			set.Rate = 2
			if err := eng.SaveRoom(context.Background(), name, set); err != nil {
				t.Fatal(err)
			}
			rep, err := k6.Soak{BaseURL: base, Room: name, N: 20, Ramp: 200, Hold: 2 * time.Second,
				Settle: 300 * time.Millisecond, SourceIPs: 4, Poll: tt.poll}.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Log(rep.String())
			if rep.Connected != 20 || rep.Failed != 0 {
				t.Fatalf("connected %d, failed %d; want 20 and 0", rep.Connected, rep.Failed)
			}
			if rep.RSSBefore <= 0 || rep.CommandsPerSec <= 0 {
				t.Fatalf("server figures missing: %+v", rep)
			}
			if tt.poll {
				if rep.PollsPerSecond <= 0 {
					t.Fatal("no polls measured")
				}
				return
			}
			if rep.Lost != 0 || rep.Duplicates != 0 || rep.Ticks < 5 || rep.LatencyP99 <= 0 {
				t.Fatalf("stream figures: %d lost, %d duplicates, %d ticks, p99 %v", rep.Lost, rep.Duplicates, rep.Ticks, rep.LatencyP99)
			}
		})
	}
}
