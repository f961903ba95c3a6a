package issuer

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"waitingroom/server/audit"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/salelog"
	"waitingroom/server/servicetest"
)

// auditEntries is an audit log in memory.
type auditEntries struct {
	mu sync.Mutex
	e  []audit.Entry
}

func (a *auditEntries) Record(_ context.Context, e audit.Entry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.e = append(a.e, e)
	return nil
}

// TestPhasesAreToldOnce: two issuers on a room whose pre-queue opens in
// 0.5 s, whose sale opens in 1.2 s and closes in 2.2 s record each
// transition exactly once, in order, by the schedule.
func TestPhasesAreToldOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rdb := servicetest.Redis(t)
	name := servicetest.RoomName(t, rdb)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	s := room.Defaults(name)
	now := time.Now()
	pre, open, closes := now.Add(500*time.Millisecond), now.Add(1200*time.Millisecond), now.Add(2200*time.Millisecond)
	s.PrequeueAt, s.OpensAt, s.ClosesAt = &pre, &open, &closes
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rec := &auditEntries{}
	sale := salelog.New(eng, log)
	sale.RecordTo(rec)
	var wg sync.WaitGroup
	for range 2 {
		l := New(oneRoom{queue.New(rdb, queue.DefaultNamespace(rdb)), name}, 50*time.Millisecond, log, nil).WatchPhases(sale)
		wg.Go(func() { l.Run(ctx) })
	}
	time.Sleep(3 * time.Second)
	cancel()
	wg.Wait()
	sale.Flush()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var got []string
	for _, e := range rec.e {
		if e.Room != name || e.Actor != "schedule" {
			t.Errorf("entry %+v", e)
		}
		got = append(got, e.Action)
	}
	want := []string{"sale.prequeue_opened", "sale.opened", "sale.closed"}
	if len(got) != len(want) {
		t.Fatalf("recorded %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("recorded %v, want %v", got, want)
		}
	}
	opened := rec.e[1].At
	if d := opened.Sub(open); d < 0 || d > 500*time.Millisecond {
		t.Errorf("the opening recorded %v after opensAt", d)
	}
}

// TestCloseByOperatorIsNotToldTwice: a room put in mode closed (the
// console tells that) is not told closed again by the issuers.
func TestCloseByOperatorIsNotToldTwice(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	name := servicetest.RoomName(t, rdb)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	s := room.Defaults(name)
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	rec := &auditEntries{}
	sale := salelog.New(eng, log)
	sale.RecordTo(rec)
	l := New(oneRoom{eng, name}, time.Second, log, nil).WatchPhases(sale)
	l.Tick(ctx)
	s.Mode = room.ModeClosed
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	l.Tick(ctx)
	sale.Flush()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.e) != 0 {
		t.Fatalf("recorded %+v, want nothing", rec.e)
	}
	if old, err := eng.MarkPhase(ctx, name, queue.PhaseClosed); err != nil || old != queue.PhaseClosed {
		t.Fatalf("marked %q %v, want closed", old, err)
	}
}
