package queue

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
			e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Mode = tt.mode }))
			payload := tickEvent(t, e, rdb, name)
			ev, err := ParseEvent([]byte(payload))
			if err != nil || bool(ev.Random) != tt.random {
				t.Fatalf("event %s: random %v (%v), want %v", payload, ev.Random, err, tt.random)
			}
		})
	}
}

// tickEvent runs one admission tick of room name and returns the event it
// published.
func tickEvent(t *testing.T, e *Engine, rdb redis.UniversalClient, name string) string {
	t.Helper()
	ctx := context.Background()
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
	return msg.Payload
}
