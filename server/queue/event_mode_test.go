package queue

import (
	"context"
	"testing"
	"time"

	"waitingroom/server/room"
)

// TestEventSaysModeRandom: a tick's event says "rm":1 in mode random, and
// nothing in the other modes, so that the hubs count a waiting page down
// at its share of the rate (CADENCE) without a command of their own.
func TestEventSaysModeRandom(t *testing.T) {
	for _, tt := range []struct {
		mode   string
		random bool
	}{
		{room.ModeRandom, true},
		{room.ModeFIFO, false},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			ctx := context.Background()
			e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Mode = tt.mode }))
			sub := rdb.Subscribe(ctx, EventsChannel(DefaultNamespace(rdb), name))
			defer sub.Close()
			if _, err := sub.Receive(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Admit(ctx, name, time.Second, nil); err != nil {
				t.Fatal(err)
			}
			msg, err := sub.ReceiveMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := ParseEvent([]byte(msg.Payload))
			if err != nil || bool(ev.Random) != tt.random {
				t.Fatalf("event %s: random %v (%v), want %v", msg.Payload, ev.Random, err, tt.random)
			}
		})
	}
}
