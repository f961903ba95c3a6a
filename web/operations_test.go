package web

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/roomsync"
	"waitingroom/server/salelog"
	"waitingroom/server/servicetest"
	"waitingroom/server/store"
	"waitingroom/server/visitor"
)

// saleEvents records what the admin API tells the sale log.
type saleEvents struct {
	mu     sync.Mutex
	events []string
}

func (s *saleEvents) Event(room string, ev salelog.Event, _ ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, room+" "+string(ev))
}

func (s *saleEvents) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.events
	s.events = nil
	return out
}

// TestRoomLifecycleIsRecordedAndLogged: every admin write of a room lands
// in the database's record and in the sale log; DELETE removes the room,
// its line, its Redis keys and its record, and keeps its products.
func TestRoomLifecycleIsRecordedAndLogged(t *testing.T) {
	t.Parallel()
	oh := newOrderHarness(t, 5, nil)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sale := &saleEvents{}
	h := newHarness(t, func(o *Options) {
		withOrderService(o, order.NewService(order.NewStore(oh.db.DB, 0), o.Queue.(order.Gate), 0, quiet))
		o.Records = roomsync.New(o.Queue.(*queue.Engine), oh.db, quiet)
		o.Sale = sale
	})
	ctx := context.Background()
	name := servicetest.RoomName(t, h.rdb)
	path := "/api/admin/rooms/" + name
	record := func() *room.Settings {
		t.Helper()
		recs, err := oh.db.Rooms(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Name == name {
				return &r.Settings
			}
		}
		return nil
	}
	steps := []struct {
		body   string
		status int
		events []string
	}{
		{`{"title":"Drop","rate":20}`, 201, []string{name + " opened"}},
		{`{"paused":true}`, 200, []string{name + " paused"}},
		{`{"paused":true,"rate":30}`, 200, []string{name + " rate changed"}},
		{`{"rate":30}`, 200, nil},
		{`{"paused":false}`, 200, []string{name + " resumed"}},
		{`{"soldOut":true}`, 200, []string{name + " sold out"}},
		{`{"soldOut":true}`, 200, nil},
		{`{"soldOut":false}`, 200, []string{name + " reopened"}},
	}
	for _, st := range steps {
		r := h.do(t, "PUT", path, st.body, adminAuth, nil)
		if r.status != st.status {
			t.Fatalf("PUT %s: %d %s", st.body, r.status, r.body)
		}
		if got := sale.take(); !reflect.DeepEqual(got, st.events) {
			t.Fatalf("PUT %s: events %q, want %q", st.body, got, st.events)
		}
		live, _ := h.eng.Room(ctx, name)
		if rec := record(); rec == nil || !reflect.DeepEqual(*rec, live) {
			t.Fatalf("PUT %s: recorded %+v, live %+v", st.body, rec, live)
		}
	}

	// A line, tokens and a product; then the room goes.
	for range 5 {
		id, _ := visitor.NewID()
		h.eng.Enter(ctx, name, id)
	}
	h.eng.Admit(ctx, name, time.Second, []string{freshToken(t)})
	if r := h.do(t, "POST", path+"/products", `{"name":"Cap","price":100,"stock":1}`, adminAuth, nil); r.status != 201 {
		t.Fatalf("product: %d %s", r.status, r.body)
	}
	r := h.do(t, "DELETE", path, "", adminAuth, nil)
	if r.status != 200 || !strings.Contains(r.body, `"deleted":true`) {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if got := sale.take(); !reflect.DeepEqual(got, []string{name + " deleted"}) {
		t.Fatalf("delete events %q", got)
	}
	if keys, _ := h.rdb.Keys(ctx, "*{"+name+"}*").Result(); len(keys) != 0 {
		t.Fatalf("Redis keys left: %v", keys)
	}
	if rooms, _ := h.eng.Rooms(ctx); strings.Contains(strings.Join(rooms, ","), name) {
		t.Fatal("the room is still in the rooms set")
	}
	if record() != nil {
		t.Fatal("the room's record outlived it")
	}
	for _, c := range []struct{ method, path string }{
		{"GET", path}, {"DELETE", path}, {"POST", "/api/rooms/" + name + "/queue"},
	} {
		if r := h.do(t, c.method, c.path, "", adminAuth, nil); r.status != 404 || !strings.Contains(r.body, "room_not_found") {
			t.Fatalf("%s %s after delete: %d %s", c.method, c.path, r.status, r.body)
		}
	}
	// Products (and orders) are records: they stay.
	if r := h.do(t, "GET", path+"/products", "", adminAuth, nil); r.status != 200 || !strings.Contains(r.body, `"Cap"`) {
		t.Fatalf("products after delete: %d %s", r.status, r.body)
	}
	if r := h.do(t, "DELETE", path, "", nil, nil); r.status != 401 {
		t.Fatalf("delete without the token: %d", r.status)
	}
}

// downDB is a database that does not answer.
func downDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=1", 2, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestReadyz: /readyz names what fails, and brings the rooms back when
// Redis lost its data. /healthz stays liveness.
func TestReadyz(t *testing.T) {
	t.Parallel()
	oh := newOrderHarness(t, 5, nil)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// A Redis database of its own: the data marker is per deployment.
	own := servicetest.RedisAt(t, servicetest.RedisURLDB(t, 12))
	ctx := context.Background()
	own.FlushDB(ctx)
	t.Cleanup(func() { own.FlushDB(context.Background()) })
	eng := queue.New(own, queue.DefaultNamespace(own))
	name := servicetest.RoomName(t, own)
	set := room.Defaults(name)
	set.Rate = 12
	if err := oh.db.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		name    string
		db      *store.DB
		flush   bool
		status  int
		failing []string
		data    string
	}{
		{"first start restores", oh.db, true, 200, nil, roomsync.Restored},
		{"all well", oh.db, false, 200, nil, roomsync.OK},
		{"database down", downDB(t), false, 503, []string{"database"}, roomsync.OK},
		{"data lost, database down", downDB(t), true, 503, []string{"database", "redisData"}, roomsync.Lost},
		{"data lost, restored", oh.db, true, 200, nil, roomsync.Restored},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(o *Options) { o.Ready = roomsync.New(eng, tt.db, quiet) })
			if tt.flush {
				own.FlushDB(ctx)
			}
			r := h.do(t, "GET", "/readyz", "", nil, nil)
			var body struct {
				Status, Error, Message string
				Failing                []string
				Checks                 map[string]string
			}
			r.json(t, &body)
			if r.status != tt.status || !reflect.DeepEqual(body.Failing, tt.failing) || body.Checks["redisData"] != tt.data ||
				r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("readyz: %d %s", r.status, r.body)
			}
			if tt.status == 503 && (body.Error != "not_ready" || !strings.Contains(body.Message, tt.failing[0]) || r.header.Get("Retry-After") == "") {
				t.Fatalf("not-ready answer: %v %s", r.header, r.body)
			}
			if tt.status == 200 {
				if got, err := eng.Room(ctx, name); err != nil || !reflect.DeepEqual(got, set) {
					t.Fatalf("room after readyz: %+v %v", got, err)
				}
			}
			if r := h.do(t, "GET", "/healthz", "", nil, nil); r.status != 200 {
				t.Fatalf("healthz is not liveness: %d", r.status)
			}
		})
	}
}

// TestReadyzWithoutAChecker falls back to pinging Redis.
func TestReadyzWithoutAChecker(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	if r := h.do(t, "GET", "/readyz", "", nil, nil); r.status != 200 || !strings.Contains(r.body, `"ready"`) {
		t.Fatalf("readyz: %d %s", r.status, r.body)
	}
	h = newHarness(t, func(o *Options) { o.Health = func(context.Context) error { return errors.New("down") } })
	if r := h.do(t, "GET", "/readyz", "", nil, nil); r.status != 503 || !strings.Contains(r.body, `"redis"`) {
		t.Fatalf("readyz with Redis down: %d %s", r.status, r.body)
	}
}
