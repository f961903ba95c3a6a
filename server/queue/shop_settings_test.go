package queue

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"waitingroom/server/room"
)

// TestRoomKeepsShopSettings stores shopURL and maxPerBuyer in the cfg hash
// and reads them back; a room saved before they existed reads as none.
func TestRoomKeepsShopSettings(t *testing.T) {
	s := room.Defaults("x")
	s.ShopURL, s.MaxPerBuyer = "https://shop.example/sale", 2
	e, name, rdb := newRoom(t, s)
	ctx := context.Background()
	got, err := e.Room(ctx, name)
	if err != nil || got.ShopURL != s.ShopURL || got.MaxPerBuyer != 2 {
		t.Fatalf("Room = %+v, %v; want shopURL %q and maxPerBuyer 2", got, err, s.ShopURL)
	}
	if err := rdb.HDel(ctx, testKeys(rdb, name).key("cfg"), "shopURL", "maxPerBuyer").Err(); err != nil {
		t.Fatal(err)
	}
	got, err = e.Room(ctx, name)
	if err != nil || got.ShopURL != "" || got.MaxPerBuyer != 0 {
		t.Fatalf("an older room: %+v, %v; want no shop URL and no per-buyer limit", got, err)
	}
}

// TestRoomKeepsBranding stores the branding in the cfg hash and reads it
// back whole; a room saved before it existed, or with a branding field
// that is not JSON, reads as none or as an error that names the room.
func TestRoomKeepsBranding(t *testing.T) {
	s := room.Defaults("x")
	s.Branding = room.Branding{AccentColor: "#1a4fd0", Description: "한정 드롭 <b>", DefaultLanguage: "ko",
		ShopName: "Shop", EmbedOrigins: []string{"https://a.example", "https://b.example"}, EmbedTarget: room.EmbedSameTab, Listed: true}
	e, name, rdb := newRoom(t, s)
	ctx := context.Background()
	got, err := e.Room(ctx, name)
	if err != nil || !reflect.DeepEqual(got.Branding, s.Branding) {
		t.Fatalf("Room = %+v, %v; want %+v", got.Branding, err, s.Branding)
	}
	key := testKeys(rdb, name).key("cfg")
	if err := rdb.HDel(ctx, key, "branding").Err(); err != nil {
		t.Fatal(err)
	}
	if got, err = e.Room(ctx, name); err != nil || !reflect.DeepEqual(got.Branding, room.Branding{}) {
		t.Fatalf("an older room: %+v, %v; want no branding", got.Branding, err)
	}
	if err := rdb.HSet(ctx, key, "branding", "{not json").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err = e.Room(ctx, name); err == nil || !strings.Contains(err.Error(), name) {
		t.Fatalf("a broken branding field: %v, want an error naming the room", err)
	}
}
