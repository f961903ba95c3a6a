package queue

import (
	"context"
	"reflect"
	"testing"

	"waitingroom/server/room"
)

// TestRoomsSettings: the settings of several rooms read at once are those
// Room reads; unknown rooms and undecodable settings are left out.
func TestRoomsSettings(t *testing.T) {
	s := room.Defaults("x")
	s.Title, s.Branding.Listed = "봄 세일", true
	e, name, rdb := newRoom(t, s)
	ctx := context.Background()
	want, err := e.Room(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		names  []string
		broken bool // the room's branding is not JSON
		want   map[string]room.Settings
	}{
		{"none", nil, false, map[string]room.Settings{}},
		{"one known, one unknown", []string{name, name + "-unknown"}, false, map[string]room.Settings{name: want}},
		{"undecodable", []string{name}, true, map[string]room.Settings{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.broken {
				if err := rdb.HSet(ctx, testKeys(rdb, name).key("cfg"), "branding", "{not json").Err(); err != nil {
					t.Fatal(err)
				}
			}
			got, err := e.RoomsSettings(ctx, tc.names)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%+v %v, want %+v", got, err, tc.want)
			}
		})
	}
}
