package web

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	t.Parallel()
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
	t.Parallel()
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

// TestAdminAdaptive: the admin API takes and shows the adaptive settings,
// answers 400 naming the field for invalid ones, and a manual rate change
// turns adaptive off until it is turned on again.
func TestAdminAdaptive(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	path := "/api/admin/rooms/" + h.room
	settings := func(r reply) room.Settings {
		t.Helper()
		var v struct {
			Settings room.Settings `json:"settings"`
		}
		r.json(t, &v)
		return v.Settings
	}
	steps := []struct {
		name, body   string
		status       int
		wantErr      string
		wantAdaptive bool
		wantRate     float64
	}{
		{"turn on with bounds", `{"adaptive":true,"minRate":0,"maxRate":300,"targetP95Ms":250,"maxErrorRate":0.05}`, 200, "", true, 300},
		{"minRate above maxRate", `{"minRate":400}`, 400, "minRate must not be above maxRate", true, 300},
		{"zero target", `{"targetP95Ms":0}`, 400, "targetP95Ms", true, 300},
		{"error budget above 1", `{"maxErrorRate":2}`, 400, "maxErrorRate", true, 300},
		{"a title change keeps it on", `{"title":"t"}`, 200, "", true, 300},
		{"a manual rate turns it off", `{"rate":40}`, 200, "", false, 40},
		{"on again, from a rate", `{"adaptive":true,"rate":20}`, 200, "", true, 20},
	}
	for _, st := range steps {
		r := h.do(t, "PUT", path, st.body, auth, nil)
		if r.status != st.status || !strings.Contains(r.body, st.wantErr) {
			t.Fatalf("%s: %d %s, want %d with %q", st.name, r.status, r.body, st.status, st.wantErr)
		}
		got := settings(h.do(t, "GET", path, "", auth, nil))
		if got.Adaptive != st.wantAdaptive || got.Rate != st.wantRate {
			t.Fatalf("%s: adaptive %v rate %g, want %v %g", st.name, got.Adaptive, got.Rate, st.wantAdaptive, st.wantRate)
		}
	}
	got := settings(h.do(t, "GET", path, "", auth, nil))
	want := room.Adapt{Adaptive: true, MinRate: 0, MaxRate: 300, TargetP95Ms: 250, MaxErrorRate: 0.05}
	if got.Adapt != want {
		t.Fatalf("adapt %+v, want %+v", got.Adapt, want)
	}

	// The controller's state shows while adaptive is on, and goes with a
	// manual rate.
	controller := func() *controllerView {
		t.Helper()
		var v roomView
		h.do(t, "GET", path, "", auth, nil).json(t, &v)
		return v.Controller
	}
	if c := controller(); c == nil || c.Rate != 20 || c.Decisions != 0 || c.Reason != "" || c.At != nil {
		t.Fatalf("controller %+v, want rate 20 before any decision", c)
	}
	ok, _, err := h.eng.ApplyAdapt(context.Background(), h.room, queue.AdaptDecision{From: 20, To: 25, Reason: "increase"})
	if err != nil || !ok {
		t.Fatalf("apply: %v %v", ok, err)
	}
	if c := controller(); c == nil || c.Rate != 25 || c.Decisions != 1 || c.Reason != "increase" || c.At == nil {
		t.Fatalf("controller %+v, want rate 25 after one increase", c)
	}
	// Its history: the changes, newest first, with their signal, at most
	// adminHistoryLen of them.
	for i := range adminHistoryLen + 5 {
		from, to := 25+float64(i), 26+float64(i)
		ok, _, err := h.eng.ApplyAdapt(context.Background(), h.room, queue.AdaptDecision{N: int64(1 + i), From: from, To: to,
			Reason: "increase", P95: 120 * time.Millisecond, ErrorRate: 0.01, Samples: 30})
		if err != nil || !ok {
			t.Fatalf("apply %d: %v %v", i, ok, err)
		}
	}
	c := controller()
	if c == nil || len(c.History) != adminHistoryLen {
		t.Fatalf("controller %+v, want %d changes", c, adminHistoryLen)
	}
	if h0 := c.History[0]; h0.To != 25+adminHistoryLen+5 || h0.From != h0.To-1 || h0.Reason != "increase" || h0.P95Ms != 120 ||
		h0.ErrorRate != 0.01 || h0.Samples != 30 || time.Since(h0.At) > time.Minute {
		t.Fatalf("newest change %+v", h0)
	}
	h.do(t, "PUT", path, `{"rate":30}`, auth, nil)
	if c := controller(); c != nil {
		t.Fatalf("controller %+v after a manual rate, want none", c)
	}
}

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

// TestAdminLines: a PUT sets a room's lines, which the GET shows (with
// each line's access spelled out); one that leaves them out keeps them,
// null or [] clears them; invalid lines are 400 invalid_settings naming
// the field, and change nothing.
func TestAdminLines(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	path := "/api/admin/rooms/" + h.room
	two := []room.Line{{Name: "presale", Share: 0.7, Access: room.LineCode}, {Name: "general", Share: 0.3, Access: room.LineOpen}}
	const twoJSON = `{"lines":[{"name":"presale","share":0.7,"access":"code"},{"name":"general","share":0.3}]}`
	steps := []struct {
		name, body string
		status     int
		wantErr    string
		want       []room.Line
	}{
		{"set two lines", twoJSON, 200, "", two},
		{"a title change keeps them", `{"title":"t"}`, 200, "", two},
		{"a share over 1", `{"lines":[{"name":"presale","share":1.5,"access":"code"}]}`, 400, "lines must each have a share above 0", two},
		{"a negative share", `{"lines":[{"name":"a","share":-0.3},{"name":"b","share":1.3}]}`, 400, "lines must each have a share above 0", two},
		{"shares short of 1", `{"lines":[{"name":"a","share":0.6},{"name":"b","share":0.3}]}`, 400, "the lines' shares must add up to 1; they add up to 0.9", two},
		{"too many lines", `{"lines":[{"name":"a","share":0.2},{"name":"b","share":0.2},{"name":"c","share":0.2},{"name":"d","share":0.2},{"name":"e","share":0.2}]}`, 400, "lines must be at most 4", two},
		{"an unknown access", `{"lines":[{"name":"a","share":1,"access":"vip"}]}`, 400, "lines must each have access", two},
		{"members without identities", `{"lines":[{"name":"a","share":1,"access":"identity"}]}`, 400, "need the room's identity to be", two},
		{"room-level codes", `{"access":"code"}`, 400, "in a room with lines: each line's access says who may join it", two},
		{"an unknown field of a line", `{"lines":[{"name":"a","shares":1}]}`, 400, "lines must be null or a list", two},
		{"null clears", `{"lines":null}`, 200, "", nil},
		{"set again", twoJSON, 200, "", two},
		{"[] clears", `{"lines":[]}`, 200, "", nil},
		{"set once more", twoJSON, 200, "", two},
		{"a line in use renamed", `{"lines":[{"name":"presale","share":0.7,"access":"code"},{"name":"public","share":0.3}]}`, 400, `line \"general\" has 1 person in it`, two},
		{"a line in use: its share changes", `{"lines":[{"name":"presale","share":0.5,"access":"code"},{"name":"general","share":0.5}]}`, 200, "",
			[]room.Line{{Name: "presale", Share: 0.5, Access: room.LineCode}, {Name: "general", Share: 0.5, Access: room.LineOpen}}},
	}
	for _, st := range steps {
		if st.name == "a line in use renamed" {
			// Someone waits in the general line.
			if j := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil); j.status != 200 || !strings.Contains(j.body, `"line":"general"`) {
				t.Fatalf("a join: %d %s", j.status, j.body)
			}
		}
		r := h.do(t, "PUT", path, st.body, adminAuth, nil)
		if r.status != st.status || !strings.Contains(r.body, st.wantErr) {
			t.Fatalf("%s: %d %s, want %d with %q", st.name, r.status, r.body, st.status, st.wantErr)
		}
		if st.status == 400 && !strings.Contains(r.body, `"error":"invalid_settings"`) && !strings.Contains(r.body, `"error":"bad_json"`) {
			t.Fatalf("%s: %s, want invalid_settings", st.name, r.body)
		}
		g := h.do(t, "GET", path, "", adminAuth, nil)
		var v struct {
			Settings room.Settings `json:"settings"`
		}
		g.json(t, &v)
		if !slices.Equal(v.Settings.Lines, st.want) {
			t.Fatalf("%s: GET lines %+v, want %+v", st.name, v.Settings.Lines, st.want)
		}
		if st.want == nil && strings.Contains(g.body, `"lines"`) {
			t.Fatalf("%s: a room without lines shows them: %s", st.name, g.body)
		}
	}
}

// TestSaveRacesTheController: an admin write of an adaptive room that
// does not change the rate leaves the rate the controller set while the
// write ran (it does not write back the rate it read), and the room stays
// adaptive; a write that changes the rate, or moves it into new bounds,
// sets it.
func TestSaveRacesTheController(t *testing.T) {
	t.Parallel()
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
