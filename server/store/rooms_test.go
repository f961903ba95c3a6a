package store_test

import (
	"context"
	"reflect"
	"testing"

	"waitingroom/server/room"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
)

func TestRoomRecords(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			db := storetest.Migrated(t, dialect)
			ctx := context.Background()
			a, b := room.Defaults("a-room"), room.Defaults("b-room")
			a.Rate, a.Paused = 12.5, true
			a.Gate = room.Gate{TargetURL: "https://shop.example/buy", SessionSeconds: 90, SessionMode: room.SessionFixed,
				FailOpen: true, Protect: []string{"/checkout"}, APIKeyHash: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
			for _, step := range []struct {
				name string
				s    room.Settings
			}{{"a-room", room.Defaults("a-room")}, {"b-room", b}, {"a-room", a}} { // the second write replaces
				if err := db.SaveRoom(ctx, step.name, step.s); err != nil {
					t.Fatal(err)
				}
			}
			// b-room sold everything it had; a-room has no products.
			if _, err := db.Exec(db.Rebind(`INSERT INTO products (room, name, price, stock) VALUES (?, 'x', 1, 0)`), "b-room"); err != nil {
				t.Fatal(err)
			}
			got, err := db.Rooms(ctx)
			want := []store.RoomRecord{{"a-room", a, false}, {"b-room", b, true}}
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("rooms %+v %v\nwant %+v", got, err, want)
			}
			if err := db.DeleteRoom(ctx, "a-room"); err != nil {
				t.Fatal(err)
			}
			if got, _ := db.Rooms(ctx); len(got) != 1 || got[0].Name != "b-room" {
				t.Fatalf("after delete: %+v", got)
			}
			// A record from before a setting existed takes its default.
			if _, err := db.Exec(db.Rebind(`UPDATE rooms SET settings = ? WHERE name = ?`), `{"title":"old","rate":5,"tokenTTLSeconds":300,"orderRate":5,"orderBurst":5}`, "b-room"); err != nil {
				t.Fatal(err)
			}
			if got, err := db.Rooms(ctx); err != nil || got[0].Settings.Mode != room.ModeFIFO || got[0].Settings.Rate != 5 ||
				!reflect.DeepEqual(got[0].Settings.Gate, room.DefaultGate()) {
				t.Fatalf("old record: %+v %v", got, err)
			}
		})
	}
}
