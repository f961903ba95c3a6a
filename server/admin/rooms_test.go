package admin

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"

	"waitingroom/server/audit"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/salelog"
	"waitingroom/server/servicetest"
)

// auditEntries is an AuditLog that keeps its entries.
type auditEntries struct {
	mu      sync.Mutex
	entries []audit.Entry
}

func (a *auditEntries) Record(_ context.Context, e audit.Entry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
	return nil
}

func (a *auditEntries) actions() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, len(a.entries))
	for i, e := range a.entries {
		out[i] = e.Action
	}
	return out
}

// saleEvents is a SaleLog that keeps the events' names.
type saleEvents struct {
	mu     sync.Mutex
	events []salelog.Event
}

func (s *saleEvents) Event(_ string, ev salelog.Event, _ ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, ev)
}

// recordsKept is a Records that keeps the last record of each room.
type recordsKept struct {
	mu      sync.Mutex
	records map[string]room.Settings
}

func (r *recordsKept) Record(_ context.Context, name string, s room.Settings) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records[name] = s
	return nil
}

func (r *recordsKept) Forget(_ context.Context, name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.records, name)
	return nil
}

// roomsFixture is the writes of rooms over the real test Redis, with the
// logs they tell kept.
type roomsFixture struct {
	rooms   *Rooms
	store   *queue.Engine
	audit   *auditEntries
	sale    *saleEvents
	records *recordsKept
	saved   []string
}

func newRoomsFixture(t *testing.T) *roomsFixture {
	rdb := servicetest.Redis(t)
	f := &roomsFixture{store: queue.New(rdb, queue.DefaultNamespace(rdb)), audit: &auditEntries{},
		sale: &saleEvents{}, records: &recordsKept{records: map[string]room.Settings{}}}
	f.rooms = NewRooms(RoomDeps{Store: f.store, Records: f.records, Audit: f.audit, Sale: f.sale,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ChallengeDefault: room.ChallengeAuto,
		Saved: func(name string, _ room.Settings) { f.saved = append(f.saved, name) }})
	return f
}

func ptr[T any](v T) *T { return &v }

func TestRoomsSave(t *testing.T) {
	for _, tc := range []struct {
		name string
		// existing makes the room before the write.
		existing bool
		w        Write
		wantErr  func(error) bool
		// wantActions are the audit log's actions of the write.
		wantActions []string
		wantEvents  []salelog.Event
	}{
		{name: "create", w: Write{Patch: room.Patch{Title: ptr("Drop")}},
			wantActions: []string{ActionCreate}, wantEvents: []salelog.Event{salelog.Opened}},
		{name: "create paused", w: Write{Patch: room.Patch{Paused: ptr(true)}},
			wantActions: []string{ActionCreate}, wantEvents: []salelog.Event{salelog.Created}},
		{name: "must exist", w: Write{Patch: room.Patch{Title: ptr("x")}, Exist: MustExist},
			wantErr: func(err error) bool { return errors.Is(err, room.ErrNotFound) }},
		{name: "must be new", existing: true, w: Write{Patch: room.Patch{Title: ptr("x")}, Exist: MustBeNew},
			wantErr: func(err error) bool { return errors.Is(err, ErrExists) }},
		{name: "invalid", w: Write{Patch: room.Patch{Rate: ptr(-1.0)}},
			wantErr: func(err error) bool { var inv *InvalidError; return errors.As(err, &inv) }},
		{name: "pause", existing: true, w: Write{Patch: room.Patch{Paused: ptr(true)}},
			wantActions: []string{ActionPause}, wantEvents: []salelog.Event{salelog.Paused}},
		{name: "rate", existing: true, w: Write{Patch: room.Patch{Rate: ptr(77.0)}},
			wantActions: []string{ActionUpdate}, wantEvents: []salelog.Event{salelog.RateChanged}},
		{name: "named action", existing: true, w: Write{Patch: room.Patch{Mode: ptr(room.ModeClosed)}, Action: ActionClose},
			wantActions: []string{ActionClose}, wantEvents: []salelog.Event{salelog.Closed}},
		{name: "no change", existing: true, w: Write{Patch: room.Patch{}}},
		{name: "sold out", existing: true, w: Write{SoldOut: ptr(true)},
			wantActions: []string{ActionUpdate}, wantEvents: []salelog.Event{salelog.SoldOut}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newRoomsFixture(t)
			name := servicetest.RoomName(t, servicetest.Redis(t))
			ctx := context.Background()
			if tc.existing {
				if err := f.store.SaveRoom(ctx, name, room.Defaults(name)); err != nil {
					t.Fatal(err)
				}
			}
			done, err := f.rooms.Save(ctx, "op", name, tc.w)
			if tc.wantErr != nil {
				if !tc.wantErr(err) {
					t.Fatalf("err %v", err)
				}
				if len(f.audit.actions()) != 0 || len(f.sale.events) != 0 || len(f.saved) != 0 {
					t.Fatalf("a refused write was told: audit %v, sale %v, saved %v", f.audit.actions(), f.sale.events, f.saved)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if done.Created == tc.existing {
				t.Fatalf("created %v for an existing room %v", done.Created, tc.existing)
			}
			if got, _ := f.store.Room(ctx, name); got.Title != done.New.Title || got.Paused != done.New.Paused {
				t.Fatalf("store has %+v, want %+v", got, done.New)
			}
			if _, ok := f.records.records[name]; !ok {
				t.Fatal("not recorded")
			}
			if len(f.saved) != 1 {
				t.Fatalf("saved told %v", f.saved)
			}
			if got := f.audit.actions(); !equal(got, tc.wantActions) {
				t.Fatalf("audit %v, want %v", got, tc.wantActions)
			}
			if !equal(f.sale.events, tc.wantEvents) {
				t.Fatalf("sale events %v, want %v", f.sale.events, tc.wantEvents)
			}
		})
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRoomsSaveDefaults: a new room takes the default challenge.
func TestRoomsSaveDefaults(t *testing.T) {
	f := newRoomsFixture(t)
	name := servicetest.RoomName(t, servicetest.Redis(t))
	done, err := f.rooms.Save(context.Background(), "op", name, Write{})
	if err != nil {
		t.Fatal(err)
	}
	if done.New.Challenge != room.ChallengeAuto {
		t.Fatalf("challenge %q, want %q", done.New.Challenge, room.ChallengeAuto)
	}
}

func TestRoomsDelete(t *testing.T) {
	f := newRoomsFixture(t)
	name := servicetest.RoomName(t, servicetest.Redis(t))
	ctx := context.Background()
	var gone []string
	f.rooms.d.Deleted = func(n string) { gone = append(gone, n) }
	if _, err := f.rooms.Delete(ctx, "op", name); !errors.Is(err, room.ErrNotFound) {
		t.Fatalf("delete of no room: %v", err)
	}
	if _, err := f.rooms.Save(ctx, "op", name, Write{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.rooms.Delete(ctx, "op", name); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.records.records[name]; ok {
		t.Fatal("record kept")
	}
	if got := f.audit.actions(); !equal(got, []string{ActionCreate, ActionDelete}) || !equal(gone, []string{name}) {
		t.Fatalf("audit %v, deleted told %v", got, gone)
	}
}

func TestKeepsControllerRate(t *testing.T) {
	adaptive := func(rate float64) room.Settings {
		s := room.Defaults("r")
		s.Adaptive, s.Rate = true, rate
		return s
	}
	fixed := room.Defaults("r")
	for _, tc := range []struct {
		name      string
		created   bool
		cur, next room.Settings
		want      bool
	}{
		{"adaptive, rate untouched", false, adaptive(10), adaptive(10), true},
		{"adaptive, rate set", false, adaptive(10), adaptive(20), false},
		{"created", true, adaptive(10), adaptive(10), false},
		{"turned adaptive", false, fixed, adaptive(fixed.Rate), false},
		{"turned fixed", false, adaptive(10), fixed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := keepsControllerRate(tc.created, tc.cur, tc.next); got != tc.want {
				t.Fatalf("keepsControllerRate %v, want %v", got, tc.want)
			}
		})
	}
}
