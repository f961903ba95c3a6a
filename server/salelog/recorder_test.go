package salelog

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"waitingroom/server/audit"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
)

// TestEventsAreRecorded: every event lands in the real audit log, with its
// actor, action name and values, on both databases.
func TestEventsAreRecorded(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			al := audit.New(storetest.Migrated(t, dialect))
			l, logs := newLog(nil)
			l.RecordTo(al)
			l.Event("drop", Opened, "by", "admin", "rate", 5.0, "mode", "fifo")
			l.Event("drop", RateChanged, "by", "alice", "old", 5.0, "new", 12.5)
			l.Event("drop", Paused, "by", "alice")
			l.Event("drop", SoldOut, "why", "no stock left")
			l.Event("other", Deleted, "by", "admin", "redisKeys", 7)
			l.Flush()
			got, err := al.List(context.Background(), audit.Filter{Room: "drop"})
			if err != nil {
				t.Fatal(err)
			}
			want := []audit.Entry{
				{Actor: "system", Room: "drop", Action: "sale.sold_out", New: `{"why":"no stock left"}`},
				{Actor: "alice", Room: "drop", Action: "sale.paused"},
				{Actor: "alice", Room: "drop", Action: "sale.rate", Old: "5", New: "12.5"},
				{Actor: "admin", Room: "drop", Action: "sale.opened", New: `{"mode":"fifo","rate":5}`},
			}
			// Recorded in order: newest first.
			if len(got) != len(want) {
				t.Fatalf("%d entries: %+v", len(got), got)
			}
			for i, w := range want {
				e := got[i]
				if e.Action != w.Action || e.Actor != w.Actor || e.Room != w.Room || e.Old != w.Old || e.New != w.New || e.At.IsZero() {
					t.Errorf("entry %d: %+v, want %+v", i, e, w)
				}
			}
			if other, _ := al.List(context.Background(), audit.Filter{Room: "other"}); len(other) != 1 || other[0].Action != "sale.deleted" {
				t.Fatalf("other room: %+v", other)
			}
			if !strings.Contains(logs.String(), `"event":"rate changed"`) {
				t.Fatal("the rate change is not in the server's log")
			}
		})
	}
}

type failingRecorder struct{}

func (failingRecorder) Record(context.Context, audit.Entry) error { return errors.New("database down") }

// TestRecorderFailureIsLogged: a failed write costs the event nothing but
// a warning.
func TestRecorderFailureIsLogged(t *testing.T) {
	l, logs := newLog(nil)
	l.RecordTo(failingRecorder{})
	l.Event("drop", Paused, "by", "admin")
	l.Flush()
	if len(logs.lines(t, "sale event", "drop")) != 1 || len(logs.lines(t, "sale event not recorded in the audit log", "drop")) != 1 {
		t.Fatalf("logs: %s", logs.String())
	}
}

// TestEventsKeepTheirOrder: a burst of events lands in the audit log in
// the order it happened, on both databases.
func TestEventsKeepTheirOrder(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			al := audit.New(storetest.Migrated(t, dialect))
			l, _ := newLog(nil)
			l.RecordTo(al)
			const n = 100
			for i := range n {
				l.Event("drop", RateChanged, "by", "alice", "old", i, "new", i+1)
			}
			l.Flush()
			got, err := al.List(context.Background(), audit.Filter{Room: "drop"})
			if err != nil || len(got) != n {
				t.Fatalf("%d entries, %v", len(got), err)
			}
			for i, e := range got { // newest first
				if want := strconv.Itoa(n - i); e.New != want {
					t.Fatalf("entry %d (id %d) is rate %s, want %s: events out of order", i, e.ID, e.New, want)
				}
			}
		})
	}
}

// blockingRecorder hands each entry to got and waits for release.
type blockingRecorder struct {
	got     chan audit.Entry
	release chan struct{}
}

func (b blockingRecorder) Record(ctx context.Context, e audit.Entry) error {
	b.got <- e
	<-b.release
	return nil
}

// TestRecordQueueIsBounded: while the database is stuck, events wait in a
// bounded queue; beyond it they are dropped from the audit log with a
// warning, and the rest are still written, in order.
func TestRecordQueueIsBounded(t *testing.T) {
	l, logs := newLog(nil)
	rec := blockingRecorder{got: make(chan audit.Entry, 100), release: make(chan struct{})}
	l.RecordTo(rec)
	l.pending = make(chan audit.Entry, 4)
	l.Event("drop", RateChanged, "old", 0, "new", 1)
	<-rec.got // being written, stuck
	for i := 1; i < 10; i++ {
		l.Event("drop", RateChanged, "old", i, "new", i+1)
	}
	if n := len(logs.lines(t, "sale event not recorded in the audit log: too many waiting", "drop")); n != 5 {
		t.Fatalf("%d events dropped, want 5 (1 being written, 4 waiting)", n)
	}
	close(rec.release)
	l.Flush()
	close(rec.got)
	var written []string
	for e := range rec.got {
		written = append(written, e.New)
	}
	if got := strings.Join(written, ","); got != "2,3,4,5" {
		t.Fatalf("written after the first: %s, want 2,3,4,5", got)
	}
	if len(logs.lines(t, "sale event", "drop")) != 10 {
		t.Fatal("the server's log lost an event")
	}
}
