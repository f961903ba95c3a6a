package salelog

import (
	"context"
	"errors"
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
			// Recorded concurrently: compare as a set, by action.
			byAction := map[string]audit.Entry{}
			for _, e := range got {
				byAction[e.Action] = e
			}
			if len(got) != len(want) {
				t.Fatalf("%d entries: %+v", len(got), got)
			}
			for _, w := range want {
				e := byAction[w.Action]
				if e.Actor != w.Actor || e.Room != w.Room || e.Old != w.Old || e.New != w.New || e.At.IsZero() {
					t.Errorf("%s: %+v, want %+v", w.Action, e, w)
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
