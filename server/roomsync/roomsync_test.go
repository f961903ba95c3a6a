package roomsync

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
)

// ownRedis is a Redis database that only this package's tests use: a
// restore and the data marker concern a whole deployment.
func ownRedis(t *testing.T) redis.UniversalClient {
	t.Helper()
	rdb := servicetest.RedisAt(t, servicetest.RedisURLDB(t, 13))
	rdb.FlushDB(context.Background())
	t.Cleanup(func() { rdb.FlushDB(context.Background()) })
	return rdb
}

// TestRedisLostItsData flushes Redis (every room's keys and the marker):
// the readiness check and the background loop bring the rooms back from
// the database, with their settings and their sold-out flag.
func TestRedisLostItsData(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			rdb := ownRedis(t)
			eng := queue.New(rdb, queue.DefaultNamespace(rdb))
			db := storetest.Migrated(t, dialect)
			var logs servicetest.SyncBuffer
			s := New(eng, db, slog.New(slog.NewTextHandler(&logs, nil)))
			s.CacheFor = 0
			ctx := context.Background()
			if r := s.Check(ctx); !r.Ready {
				t.Fatalf("first check: %+v", r)
			}

			sale, gone := servicetest.RoomName(t, rdb), servicetest.RoomName(t, rdb)
			set := room.Defaults(sale)
			set.Title, set.Rate, set.Paused, set.MaxActive = "Flash sale", 7, true, 30
			soldOut := room.Defaults("x")
			// An adaptive room, recorded at 150 (its controller moves it
			// since), restarts at its minRate.
			adaptive := servicetest.RoomName(t, rdb)
			adaptiveSet := room.Defaults(adaptive)
			adaptiveSet.Rate, adaptiveSet.Adapt = 150, room.Adapt{Adaptive: true, MinRate: 12, MaxRate: 200, TargetP95Ms: 400, MaxErrorRate: 0.02}
			for _, r := range []struct {
				name string
				set  room.Settings
			}{{sale, set}, {gone, soldOut}, {adaptive, adaptiveSet}} {
				if err := eng.SaveRoom(ctx, r.name, r.set); err != nil {
					t.Fatal(err)
				}
				if err := s.Record(ctx, r.name, r.set); err != nil {
					t.Fatal(err)
				}
			}
			// gone sold everything it had, and is then deleted by the operator.
			db.Exec(db.Rebind(`INSERT INTO products (room, name, price, stock) VALUES (?, 'x', 1, 0)`), gone)
			if err := s.Forget(ctx, gone); err != nil {
				t.Fatal(err)
			}
			soldOutRoom := servicetest.RoomName(t, rdb)
			if err := s.Record(ctx, soldOutRoom, soldOut); err != nil {
				t.Fatal(err)
			}
			db.Exec(db.Rebind(`INSERT INTO products (room, name, price, stock) VALUES (?, 'x', 1, 0)`), soldOutRoom)

			rdb.FlushDB(ctx) // Redis restarted without persistence
			r := s.Check(ctx)
			if !r.Ready || r.Checks[CheckData] != Restored {
				t.Fatalf("check after the loss: %+v", r)
			}
			if got, err := eng.Room(ctx, sale); err != nil || !reflect.DeepEqual(got, set) {
				t.Fatalf("restored settings %+v %v, want %+v", got, err, set)
			}
			if got, err := eng.Room(ctx, adaptive); err != nil || got.Rate != 12 || !got.Adaptive {
				t.Fatalf("the adaptive room came back at %g (adaptive %v, %v), want its minRate 12", got.Rate, got.Adaptive, err)
			}
			if st, err := eng.Stats(ctx, soldOutRoom); err != nil || !st.SoldOut {
				t.Fatalf("the sold-out room came back open: %+v %v", st, err)
			}
			if _, err := eng.Room(ctx, gone); !errors.Is(err, room.ErrNotFound) {
				t.Fatalf("a deleted room came back: %v", err)
			}
			if !strings.Contains(logs.String(), "rooms restored from the database") {
				t.Fatalf("the restore was not logged:\n%s", logs.String())
			}
			if r := s.Check(ctx); !r.Ready || r.Checks[CheckData] != OK {
				t.Fatalf("check once restored: %+v", r)
			}

			// The background loop does it without a readiness probe.
			rdb.FlushDB(ctx)
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { s.Run(runCtx, 50*time.Millisecond); close(done) }()
			defer func() { stop(); <-done }()
			deadline := time.Now().Add(3 * time.Second)
			for {
				if _, err := eng.Room(ctx, sale); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the background loop did not restore the room")
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

func TestReadinessNamesTheFailingPart(t *testing.T) {
	rdb := ownRedis(t)
	db := storetest.Migrated(t, store.Postgres)
	down, err := store.Open(context.Background(), "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=1", 2, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer dead.Close()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()

	tests := []struct {
		name    string
		redis   redis.UniversalClient
		db      Records
		flush   bool
		failing []string
		checks  map[string]string
	}{
		{"all well", rdb, db, false, nil, map[string]string{CheckRedis: OK, CheckDatabase: OK, CheckData: OK}},
		{"database down", rdb, down, false, []string{CheckDatabase}, map[string]string{CheckRedis: OK, CheckDatabase: Unreachable, CheckData: OK}},
		{"redis down", dead, db, false, []string{CheckRedis, CheckData}, map[string]string{CheckRedis: Unreachable, CheckDatabase: OK, CheckData: Unknown}},
		{"data lost, database down", rdb, down, true, []string{CheckDatabase, CheckData}, map[string]string{CheckRedis: OK, CheckDatabase: Unreachable, CheckData: Lost}},
		{"data lost, restored", rdb, db, true, nil, map[string]string{CheckRedis: OK, CheckDatabase: OK, CheckData: Restored}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(queue.New(tt.redis, queue.DefaultNamespace(tt.redis)), tt.db, quiet)
			s.Timeout = time.Second
			if tt.flush {
				rdb.FlushDB(ctx)
			} else {
				New(queue.New(rdb, queue.DefaultNamespace(rdb)), db, quiet).Restore(ctx) // the marker is there
			}
			r := s.Check(ctx)
			if r.Ready != (tt.failing == nil) || !reflect.DeepEqual(r.Failing(), tt.failing) || !reflect.DeepEqual(r.Checks, tt.checks) {
				t.Fatalf("report %+v (failing %v), want failing %v and %v", r, r.Failing(), tt.failing, tt.checks)
			}
		})
	}
}

// flaky is a database that fails while down is set.
type flaky struct {
	*store.DB
	down atomic.Bool
}

var errDown = errors.New("database down")

func (f *flaky) SaveRoom(ctx context.Context, name string, s room.Settings) error {
	if f.down.Load() {
		return errDown
	}
	return f.DB.SaveRoom(ctx, name, s)
}

func (f *flaky) DeleteRoom(ctx context.Context, name string) error {
	if f.down.Load() {
		return errDown
	}
	return f.DB.DeleteRoom(ctx, name)
}

func (f *flaky) Rooms(ctx context.Context) ([]store.RoomRecord, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.DB.Rooms(ctx)
}

// TestRecordsMissedDuringAnOutage: admin writes made while the database is
// down are written once it is back, and a restore in between prefers them.
func TestRecordsMissedDuringAnOutage(t *testing.T) {
	rdb := ownRedis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	db := &flaky{DB: storetest.Migrated(t, store.Postgres)}
	s := New(eng, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	a, b := servicetest.RoomName(t, rdb), servicetest.RoomName(t, rdb)
	old, cur := room.Defaults(a), room.Defaults(a)
	cur.Rate = 3
	for _, name := range []string{a, b} {
		if err := s.Record(ctx, name, old); err != nil {
			t.Fatal(err)
		}
	}
	db.down.Store(true)
	if err := s.Record(ctx, a, cur); !errors.Is(err, errDown) {
		t.Fatalf("record while down: %v", err)
	}
	if err := s.Forget(ctx, b); !errors.Is(err, errDown) {
		t.Fatalf("forget while down: %v", err)
	}
	s.flush(ctx) // still down: kept
	db.down.Store(false)

	rdb.FlushDB(ctx)
	if _, err := s.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := eng.Room(ctx, a); err != nil || got.Rate != 3 {
		t.Fatalf("restore used the stale record: %+v %v", got, err)
	}
	if _, err := eng.Room(ctx, b); !errors.Is(err, room.ErrNotFound) {
		t.Fatalf("restore brought back a room deleted during the outage: %v", err)
	}

	s.flush(ctx)
	recs, err := db.Rooms(ctx)
	if err != nil || len(recs) != 1 || recs[0].Name != a || recs[0].Settings.Rate != 3 {
		t.Fatalf("records after the outage: %+v %v", recs, err)
	}
}

// TestKeptRoomsComeBack: the demo room is re-created at every restore,
// without a record.
func TestKeptRoomsComeBack(t *testing.T) {
	rdb := ownRedis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	s := New(eng, storetest.Migrated(t, store.SQLite), slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx := context.Background()
	name := servicetest.RoomName(t, rdb)
	s.Keep(name, room.Defaults(name))
	if ok, err := s.Restore(ctx); err != nil || !ok {
		t.Fatalf("restore: %v %v", ok, err)
	}
	if ok, err := s.Restore(ctx); err != nil || ok {
		t.Fatalf("restore with the marker there: %v %v", ok, err)
	}
	rdb.FlushDB(ctx)
	if ok, err := s.Restore(ctx); err != nil || !ok {
		t.Fatalf("restore after a loss: %v %v", ok, err)
	}
	if _, err := eng.Room(ctx, name); err != nil {
		t.Fatal(err)
	}
}
