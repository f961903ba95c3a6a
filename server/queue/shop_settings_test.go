package queue

import (
	"context"
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
