package queue

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"waitingroom/server/room"
)

func TestParseEvent(t *testing.T) {
	spread250 := 250
	tests := []struct {
		in   string
		ok   bool
		want Event
	}{
		{`{"n":3,"h":10,"t":1700000000000001,"w":5,"r":49.5,"a":["AAAAAAAAAAAAAAAAAAAAAA"],"d":[12,15]}`, true,
			Event{Tick: 3, Head: 10, TimeMicros: 1700000000000001, Waiting: 5, Rate: 49.5, Admitted: []string{"AAAAAAAAAAAAAAAAAAAAAA"}, Departed: []int64{12, 15}}},
		{`{"n":1,"h":0,"t":1,"w":0,"r":50,"a":[],"d":[]}`, true, Event{Tick: 1, TimeMicros: 1, Rate: 50, Admitted: []string{}, Departed: []int64{}}},
		{`not json`, false, Event{}},
		{`{"n":-1,"h":0}`, false, Event{}},
		// The room's readySpreadMs: absent is the server's default (nil).
		{`{"n":2,"h":0,"t":1,"w":0,"r":50,"a":[],"d":[],"rs":250}`, true, Event{Tick: 2, TimeMicros: 1, Rate: 50, ReadySpreadMs: &spread250}},
		{`{"n":2,"h":0,"t":1,"w":0,"r":50,"a":[],"d":[],"rs":0}`, true, Event{Tick: 2, TimeMicros: 1, Rate: 50, ReadySpreadMs: new(int)}},
		{`{"n":2,"h":0,"rs":-1}`, false, Event{}},
		{`{"n":2,"h":0,"rs":1.5}`, false, Event{}},
	}
	for _, tt := range tests {
		got, err := ParseEvent([]byte(tt.in))
		if (err == nil) != tt.ok {
			t.Fatalf("ParseEvent(%s) error %v, want ok %v", tt.in, err, tt.ok)
		}
		if tt.ok && (got.Tick != tt.want.Tick || got.Head != tt.want.Head || got.TimeMicros != tt.want.TimeMicros ||
			got.Waiting != tt.want.Waiting || got.Rate != tt.want.Rate || !slices.Equal(got.Admitted, tt.want.Admitted) ||
			!slices.Equal(got.Departed, tt.want.Departed) || !room.SameReadySpread(got.ReadySpreadMs, tt.want.ReadySpreadMs)) {
			t.Fatalf("ParseEvent(%s) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

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
	wakeRoom(t, e, name) // an empty room sleeps: this tick runs
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
