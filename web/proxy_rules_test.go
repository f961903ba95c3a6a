package web

import (
	"testing"

	"waitingroom/server/room"
)

func TestProtectTableMatch(t *testing.T) {
	rooms := map[string]room.Settings{}
	add := func(name string, failOpen bool, p ...string) {
		s := room.Defaults(name)
		s.Gate.Protect, s.Gate.FailOpen = p, failOpen
		rooms[name] = s
	}
	add("a", false, "/checkout", "/api/pay")
	add("b", true, "/checkout/vip", "/Tickets/")
	add("c", false, "/checkout") // the same prefix as a: a, by name
	table := newProtectTable(rooms)
	for _, tt := range []struct {
		path, room string
	}{
		{"/checkout", "a"},
		{"/checkout/", "a"},
		{"/checkout/x", "a"},
		{"/checkout;x=1", "a"},
		{"/checkouts", ""},
		{"/checkout/vip", "b"},
		{"/checkout/vip/1", "b"},
		{"/checkout/vipx", "a"},
		{"/CHECKOUT/VIP", "b"},
		{"/api/pay", "a"},
		{"/api/payment", ""},
		{"/tickets/1", "b"},
		{"/tickets", ""},
		{"/a/../checkout", "a"},
		{"/./checkout", "a"},
		{"//checkout", "a"},
		{"checkout", "a"},
		{"/", ""},
		{"", ""},
	} {
		r, ok := table.match(tt.path)
		if ok != (tt.room != "") || r.room != tt.room {
			t.Errorf("%q: room %q (%v), want %q", tt.path, r.room, ok, tt.room)
		}
	}
	if r, _ := table.match("/checkout/vip"); !r.failOpen {
		t.Error("room b's failOpen was lost")
	}
	if _, ok := protectTable(nil).match("/checkout"); ok {
		t.Error("an empty table protects")
	}
}
