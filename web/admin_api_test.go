package web

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"waitingroom/server/queue"
	"waitingroom/server/room"
)

// readsFailAfterSave is a room store whose reads fail once a save went
// through: the save is made, the answer's follow-up read times out.
type readsFailAfterSave struct {
	savedRooms
	saved atomic.Bool
}

// savedRooms names the embedded Rooms apart from its method Rooms.
type savedRooms = Rooms

// failReadsAfterSave wraps the options' room store so that its reads fail
// once a save went through; it returns the wrapper.
func failReadsAfterSave(o *Options) *readsFailAfterSave {
	f := &readsFailAfterSave{savedRooms: o.Rooms}
	o.Rooms = f
	return f
}

var errReadTimedOut = fmt.Errorf("queue: read: %w", context.DeadlineExceeded)

func (f *readsFailAfterSave) SaveRoom(ctx context.Context, name string, s room.Settings) error {
	err := f.savedRooms.SaveRoom(ctx, name, s)
	f.saved.Store(err == nil)
	return err
}

func (f *readsFailAfterSave) SaveRoomKeepingRate(ctx context.Context, name string, s room.Settings) error {
	err := f.savedRooms.SaveRoomKeepingRate(ctx, name, s)
	f.saved.Store(err == nil)
	return err
}

func (f *readsFailAfterSave) Stats(ctx context.Context, name string) (queue.Stats, error) {
	if f.saved.Load() {
		return queue.Stats{}, errReadTimedOut
	}
	return f.savedRooms.Stats(ctx, name)
}

func (f *readsFailAfterSave) APIKeyHash(ctx context.Context, name string) (string, error) {
	if f.saved.Load() {
		return "", errReadTimedOut
	}
	return f.savedRooms.APIKeyHash(ctx, name)
}

func (f *readsFailAfterSave) AdaptRooms(ctx context.Context, names []string) (map[string]queue.AdaptRoom, error) {
	if f.saved.Load() {
		return nil, errReadTimedOut
	}
	return f.savedRooms.AdaptRooms(ctx, names)
}

func (f *readsFailAfterSave) AdaptHistory(ctx context.Context, name string, n int) ([]queue.AdaptChange, error) {
	if f.saved.Load() {
		return nil, errReadTimedOut
	}
	return f.savedRooms.AdaptHistory(ctx, name, n)
}

// TestSavedSettingsAnswerSaved: a PUT whose save went through answers it
// (200, or 201 for a new room) with the saved settings, even when the live
// figures' read after the save fails: "live" is null and "liveError" says
// why. A GET that cannot read them still answers 503.
func TestSavedSettingsAnswerSaved(t *testing.T) {
	var rooms *readsFailAfterSave
	h := newHarness(t, func(o *Options) { rooms = failReadsAfterSave(o) })
	ctx := context.Background()
	for _, tc := range []struct {
		name, room, body string
		status           int
		rate             float64
	}{
		{"update", h.room, `{"rate":77}`, 200, 77},
		{"pause", h.room, `{"paused":true}`, 200, 77},
		{"create", h.room + "-new", `{"rate":12}`, 201, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rooms.saved.Store(false)
			t.Cleanup(func() { h.eng.DeleteRoom(ctx, h.room+"-new") })
			r := h.do(t, "PUT", "/api/admin/rooms/"+tc.room, tc.body, adminAuth, nil)
			var v roomView
			r.json(t, &v)
			if r.status != tc.status || v.Settings.Rate != tc.rate || v.Live != nil || v.LiveError == "" {
				t.Fatalf("%d %s, want %d with rate %v and a liveError", r.status, r.body, tc.status, tc.rate)
			}
			if set, err := h.eng.Room(ctx, tc.room); err != nil || set.Rate != tc.rate {
				t.Fatalf("saved settings %+v, %v: want rate %v", set, err, tc.rate)
			}
			if r := h.do(t, "GET", "/api/admin/rooms/"+tc.room, "", adminAuth, nil); r.status != 503 {
				t.Fatalf("a GET without its live figures: %d %s", r.status, r.body)
			}
		})
	}
}

// soldOutFails is a room store that saves settings but cannot set the
// sold-out flag.
type soldOutFails struct{ savedRooms }

func (soldOutFails) SetSoldOut(context.Context, string, bool) error { return errReadTimedOut }

// TestSavedSettingsWithoutTheirSoldOutFlag: a PUT whose settings were saved
// but whose sold-out flag could not be set answers 200 with the saved
// settings and a warning that says so, never an error for a saved change.
func TestSavedSettingsWithoutTheirSoldOutFlag(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Rooms = soldOutFails{o.Rooms} })
	ctx := context.Background()
	for _, tc := range []struct {
		name, body string
		rate       float64
		warned     bool
	}{
		{"settings and the flag", `{"rate":33,"soldOut":true}`, 33, true},
		{"settings alone", `{"rate":34}`, 34, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(t, "PUT", "/api/admin/rooms/"+h.room, tc.body, adminAuth, nil)
			var v roomView
			r.json(t, &v)
			if r.status != 200 || v.Settings.Rate != tc.rate || slices.Contains(v.Warnings, soldOutUnset) != tc.warned {
				t.Fatalf("%d %s, want 200 with rate %v (warned %v)", r.status, r.body, tc.rate, tc.warned)
			}
			if set, err := h.eng.Room(ctx, h.room); err != nil || set.Rate != tc.rate {
				t.Fatalf("saved settings %+v, %v: want rate %v", set, err, tc.rate)
			}
			if st, err := h.eng.Stats(ctx, h.room); err != nil || st.SoldOut {
				t.Fatalf("sold out %v, %v: the flag was not to be set", st.SoldOut, err)
			}
		})
	}
}
