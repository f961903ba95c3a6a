package audit_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"waitingroom/server/audit"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
)

func TestLog(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			l := audit.New(storetest.Migrated(t, dialect))
			at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
			for i := range 7 {
				room := "a-room"
				if i%2 == 1 {
					room = "b-room"
				}
				e := audit.Entry{At: at.Add(time.Duration(i) * time.Minute), Actor: "alice", Room: room,
					Action: "room.update", Target: fmt.Sprint(i), Old: `{"rate":1}`}
				if i == 6 {
					e.Old, e.New = "", `{"rate":2}`
				}
				if err := l.Record(ctx, e); err != nil {
					t.Fatal(err)
				}
			}
			if err := l.Record(ctx, audit.Entry{Actor: "system", Action: "sale.sold_out", Room: "c-room", Old: strings.Repeat("é", 20000)}); err != nil {
				t.Fatal(err)
			}
			targets := func(es []audit.Entry) string {
				var s []string
				for _, e := range es {
					s = append(s, e.Target)
				}
				return strings.Join(s, ",")
			}
			all, err := l.List(ctx, audit.Filter{})
			if err != nil || len(all) != 8 {
				t.Fatalf("List all: %d entries, %v", len(all), err)
			}
			if got := all[0]; got.Action != "sale.sold_out" || len(got.Old) > 16<<10 || !strings.HasPrefix(got.Old, "éé") || strings.ToValidUTF8(got.Old, "?") != got.Old || time.Since(got.At) > time.Minute {
				t.Fatalf("the clipped entry: action %q, %d bytes, at %v", got.Action, len(got.Old), got.At)
			}
			want := audit.Entry{ID: all[1].ID, At: at.Add(6 * time.Minute), Actor: "alice", Room: "a-room", Action: "room.update", Target: "6", New: `{"rate":2}`}
			if got := all[1]; !got.At.Equal(want.At) || (func() bool { got.At = want.At; return !reflect.DeepEqual(got, want) })() {
				t.Fatalf("entry\n%+v\nwant\n%+v", all[1], want)
			}
			for _, tt := range []struct {
				f    audit.Filter
				want string
			}{
				{audit.Filter{Room: "a-room"}, "6,4,2,0"},
				{audit.Filter{Room: "b-room"}, "5,3,1"},
				{audit.Filter{Room: "a-room", Limit: 2}, "6,4"},
				{audit.Filter{Room: "a-room", Limit: 2, Before: all[3].ID}, "2,0"}, // all[3] is target 4
				{audit.Filter{Limit: 3, Before: all[1].ID}, "5,4,3"},
				{audit.Filter{Room: "nope"}, ""},
				{audit.Filter{Room: "a-room", Limit: 100000}, "6,4,2,0"},
			} {
				got, err := l.List(ctx, tt.f)
				if err != nil || targets(got) != tt.want {
					t.Errorf("List(%+v) = %q, %v; want %q", tt.f, targets(got), err, tt.want)
				}
			}
		})
	}
}

func TestChanges(t *testing.T) {
	type settings struct {
		Title  string         `json:"title"`
		Rate   float64        `json:"rate"`
		Paused bool           `json:"paused,omitempty"`
		Tags   []string       `json:"tags"`
		Extra  map[string]int `json:"extra"`
	}
	base := settings{Title: "Drop", Rate: 5, Tags: []string{"a"}, Extra: map[string]int{"x": 1}}
	for _, tt := range []struct {
		name     string
		old, new any
		want     []audit.Change
	}{
		{"same", base, base, nil},
		{"two fields, sorted", base, settings{Title: "Drop 2", Rate: 7.5, Tags: []string{"a"}, Extra: map[string]int{"x": 1}},
			[]audit.Change{{"rate", "5", "7.5"}, {"title", `"Drop"`, `"Drop 2"`}}},
		{"nested, compact", base, settings{Title: "Drop", Rate: 5, Tags: []string{"a", "b"}, Extra: map[string]int{"x": 2}},
			[]audit.Change{{"extra", `{"x":1}`, `{"x":2}`}, {"tags", `["a"]`, `["a","b"]`}}},
		{"a field appears", base, settings{Title: "Drop", Rate: 5, Paused: true, Tags: []string{"a"}, Extra: map[string]int{"x": 1}},
			[]audit.Change{{"paused", "", "true"}}},
		{"created", nil, map[string]any{"name": "x"}, []audit.Change{{"name", "", `"x"`}}},
		{"deleted", map[string]any{"name": "x"}, nil, []audit.Change{{"name", `"x"`, ""}}},
		{"not objects", 3, 4, []audit.Change{{"", "3", "4"}}},
		{"equal scalars", "a", "a", nil},
		{"escaping", map[string]string{"t": "<b>"}, map[string]string{"t": "a\"b"}, []audit.Change{{"t", `"\u003cb\u003e"`, `"a\"b"`}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := audit.Changes(tt.old, tt.new); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Changes = %q\nwant      %q", got, tt.want)
			}
		})
	}
}
