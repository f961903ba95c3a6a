package web

import (
	"context"
	"sync"
	"testing"

	"waitingroom/server/queue"
	"waitingroom/server/room"
)

// racingRooms is the room store with a hook run once, right after a read
// of the room's settings: the adaptive controller deciding in the middle
// of an admin write.
type racingRooms struct {
	*queue.Engine
	mu    sync.Mutex
	after func()
}

func (r *racingRooms) Room(ctx context.Context, name string) (room.Settings, error) {
	s, err := r.Engine.Room(ctx, name)
	r.mu.Lock()
	f := r.after
	r.after = nil
	r.mu.Unlock()
	if f != nil {
		f()
	}
	return s, err
}

// TestSaveRacesTheController: an admin write of an adaptive room that
// does not change the rate leaves the rate the controller set while the
// write ran (it does not write back the rate it read), and the room stays
// adaptive; a write that changes the rate, or moves it into new bounds,
// sets it.
func TestSaveRacesTheController(t *testing.T) {
	ctx := context.Background()
	rr := &racingRooms{}
	h := newHarness(t, func(o *Options) {
		rr.Engine = o.Rooms.(*queue.Engine)
		o.Rooms = rr
	})
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	path := "/api/admin/rooms/" + h.room
	for _, tc := range []struct {
		name         string
		body         string
		wantRate     float64
		wantAdaptive bool
	}{
		{"a title", `{"title":"renamed"}`, 120, true},
		{"the rate as it was read", `{"rate":100}`, 120, true},
		{"a pause", `{"paused":true}`, 120, true},
		{"bounds that move the rate", `{"maxRate":90}`, 90, true},
		{"a manual rate", `{"rate":50}`, 50, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := room.Defaults(h.room)
			set.Rate, set.OrderRate = 100, 1000
			set.Adapt = room.Adapt{Adaptive: true, MinRate: 5, MaxRate: 300, TargetP95Ms: 500, MaxErrorRate: 0.02}
			if err := h.eng.SaveRoom(ctx, h.room, set); err != nil {
				t.Fatal(err)
			}
			rr.mu.Lock()
			rr.after = func() {
				rs, err := h.eng.AdaptRooms(ctx, []string{h.room})
				if err != nil {
					t.Error(err)
					return
				}
				if ok, why, err := h.eng.ApplyAdapt(ctx, h.room, queue.AdaptDecision{N: rs[h.room].N, From: 100, To: 120, Reason: "increase"}); err != nil || !ok {
					t.Errorf("the controller's step: %v %q %v", ok, why, err)
				}
			}
			rr.mu.Unlock()
			if r := h.do(t, "PUT", path, tc.body, auth, nil); r.status != 200 {
				t.Fatalf("PUT %s: %d %s", tc.body, r.status, r.body)
			}
			got, err := h.eng.Room(ctx, h.room)
			if err != nil || got.Rate != tc.wantRate || got.Adaptive != tc.wantAdaptive {
				t.Fatalf("after %s: rate %g adaptive %v (%v), want %g %v", tc.body, got.Rate, got.Adaptive, err, tc.wantRate, tc.wantAdaptive)
			}
		})
	}
}
