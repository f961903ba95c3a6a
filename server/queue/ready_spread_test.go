package queue

import (
	"context"
	"strings"
	"testing"

	"waitingroom/server/room"
)

// TestReadySpreadReachesTheHub: a room's readySpreadMs is stored, read
// back, published in each tick's event ("rs", absent for the server's
// default) and carried by the snapshot, so that the hubs learn it without
// a command of their own.
func TestReadySpreadReachesTheHub(t *testing.T) {
	ms := func(n int) *int { return &n }
	tests := []struct {
		name   string
		spread *int
		rs     string // what the event says; "" for nothing
	}{
		{"unset: the server's default", nil, ""},
		{"no spread", ms(0), `,"rs":0`},
		{"250 ms", ms(250), `,"rs":250`},
		{"one tick", ms(1000), `,"rs":1000`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.ReadySpreadMs = tt.spread }))
			got, err := e.Room(ctx, name)
			if err != nil || !room.SameReadySpread(got.ReadySpreadMs, tt.spread) {
				t.Fatalf("Room: readySpreadMs %v (%v), want %v", deref(got.ReadySpreadMs), err, deref(tt.spread))
			}

			payload := tickEvent(t, e, rdb, name)
			if tt.rs == "" && strings.Contains(payload, `"rs"`) || tt.rs != "" && !strings.Contains(payload, tt.rs) {
				t.Fatalf("event %s, want %q", payload, tt.rs)
			}
			ev, err := ParseEvent([]byte(payload))
			if err != nil || !room.SameReadySpread(ev.ReadySpreadMs, tt.spread) {
				t.Fatalf("event's readySpreadMs %v (%v), want %v", deref(ev.ReadySpreadMs), err, deref(tt.spread))
			}

			snap, err := e.Snapshot(ctx, name)
			if err != nil || !room.SameReadySpread(snap.ReadySpreadMs, tt.spread) {
				t.Fatalf("snapshot's readySpreadMs %v (%v), want %v", deref(snap.ReadySpreadMs), err, deref(tt.spread))
			}
		})
	}
}

// TestReadySpreadChanges: a save that sets the spread back to the
// server's default takes it out of the next event and snapshot.
func TestReadySpreadChanges(t *testing.T) {
	ctx := context.Background()
	v := 300
	s := settings(func(s *room.Settings) { s.ReadySpreadMs = &v })
	e, name, _ := newRoom(t, s)
	for _, want := range []*int{nil, new(int), &v} {
		s.ReadySpreadMs = want
		if err := e.SaveRoom(ctx, name, s); err != nil {
			t.Fatal(err)
		}
		got, err := e.Room(ctx, name)
		if err != nil || !room.SameReadySpread(got.ReadySpreadMs, want) {
			t.Fatalf("Room after saving %v: %v (%v)", deref(want), deref(got.ReadySpreadMs), err)
		}
		snap, err := e.Snapshot(ctx, name)
		if err != nil || !room.SameReadySpread(snap.ReadySpreadMs, want) {
			t.Fatalf("snapshot after saving %v: %v (%v)", deref(want), deref(snap.ReadySpreadMs), err)
		}
	}
}

// TestRoomSavedBeforeReadySpread: a room whose settings hash has no
// readySpreadMs (saved before the setting existed) follows the server's
// default.
func TestRoomSavedBeforeReadySpread(t *testing.T) {
	ctx := context.Background()
	v := 300
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.ReadySpreadMs = &v }))
	if err := rdb.HDel(ctx, testKeys(rdb, name).key("cfg"), "readySpreadMs").Err(); err != nil {
		t.Fatal(err)
	}
	got, err := e.Room(ctx, name)
	if err != nil || got.ReadySpreadMs != nil {
		t.Fatalf("Room: readySpreadMs %v (%v), want nil", deref(got.ReadySpreadMs), err)
	}
	if snap, err := e.Snapshot(ctx, name); err != nil || snap.ReadySpreadMs != nil {
		t.Fatalf("snapshot: readySpreadMs %v (%v), want nil", deref(snap.ReadySpreadMs), err)
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
