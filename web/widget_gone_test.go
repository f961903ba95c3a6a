package web

import (
	"context"
	"net/http"
	"testing"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/web/sse"
)

// TestWidgetOfUnknownRoom: polls of an unknown or deleted room answer 404
// and reuse the cached "not found": a burst costs one settings read.
func TestWidgetOfUnknownRoom(t *testing.T) {
	var counted *countingRooms
	h := newHarness(t, func(o *Options) {
		counted = &countingRooms{widgetRoomsStore: o.Rooms}
		o.Rooms = counted
	})
	for _, tc := range []struct {
		name, path string
		reads      int64
	}{
		{"status", "/r/no-such-room-fixw/widget/status", 1},
		{"page (its language from the room face, which caches apart)", "/r/no-such-room-fixw2/widget", 2},
		{"events", "/r/no-such-room-fixw3/widget/events", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := counted.reads.Load()
			for range 5 {
				if r := h.do(t, "GET", tc.path, "", nil, nil); r.status != http.StatusNotFound {
					t.Fatalf("status %d, want 404", r.status)
				}
			}
			if n := counted.reads.Load() - before; n != tc.reads {
				t.Fatalf("5 polls of an unknown room cost %d settings reads, want %d", n, tc.reads)
			}
		})
	}
}

// TestWidgetStreamOfDeletedRoom: a room deleted under its open widget
// streams sends them a closing "gone" event (here found by the hub's
// resync), while a buyer's stream is left as it was.
func TestWidgetStreamOfDeletedRoom(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	if err := eng.SaveRoom(context.Background(), name, room.Defaults(name)); err != nil {
		t.Fatal(err)
	}
	in := startInstance(t, rdb, eng, name, time.Hour, true, sse.Options{MaxWidgets: 3, MaxPerIP: 3, Heartbeat: 200 * time.Millisecond})
	for _, tc := range []struct {
		name string
		gone func()
	}{
		{"resync finds no room", func() { in.hub.Subscribed() }},
		{"deleted by another process: the quiet room is resynced", func() {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := follow(t, in.url+"/r/"+name+"/widget/events", nil, "")
			if e := c.next(t, eventWait); string(e.Event) != "room" {
				t.Fatalf("first event %q", e.Event)
			}
			if err := eng.SaveRoom(context.Background(), name, room.Defaults(name)); err != nil {
				t.Fatal(err)
			}
			if _, err := eng.DeleteRoom(context.Background(), name); err != nil {
				t.Fatal(err)
			}
			tc.gone()
			if e := c.next(t, eventWait); string(e.Event) != "gone" {
				t.Fatalf("after the deletion: event %q %s", e.Event, e.Data)
			}
			deadline := time.Now().Add(5 * time.Second)
			for in.hub.Widgets() != 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if n := in.hub.Widgets(); n != 0 {
				t.Fatalf("the deleted room's widget streams still open: %d", n)
			}
		})
	}
}
