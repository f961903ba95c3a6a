package web

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"waitingroom/server/room"
	"waitingroom/web/gatemode"
)

// TestGateSessionBoundToShopHost: a pass opens a session only on its own
// shop's host, and /gate/check lets a session open only its own room's
// shop: by X-Waitingroom-Room when nginx sends it, else by the host.
func TestGateSessionBoundToShopHost(t *testing.T) {
	g := newGateHarness(t, nil)
	roomA := g.room
	roomB := roomA + "-b"
	set := room.Defaults(roomB)
	set.Rate = 1000
	set.Gate.TargetURL = "https://other.example/x"
	if err := g.eng.SaveRoom(context.Background(), roomB, set); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.eng.DeleteRoom(context.Background(), roomB) })
	g.room = roomB
	passB, passB2 := g.newPass(t), g.newPass(t)
	g.room = roomA
	enter := func(p, host string) reply {
		return g.form(t, gatemode.EnterPath, url.Values{"pass": {p}, "next": {"/checkout"}}, map[string]string{"Host": host}, nil)
	}
	for _, host := range []string{"shop.example", "shop.example:443", "evil.example"} {
		if r := enter(passB, host); r.status != http.StatusUnauthorized || gateCookieOf(r) != nil {
			t.Fatalf("room B's pass on %s: %d, cookie %v", host, r.status, gateCookieOf(r))
		}
	}
	r := enter(passB2, "Other.Example:443")
	cB := gateCookieOf(r)
	if r.status != http.StatusSeeOther || cB == nil {
		t.Fatalf("room B's pass on its own host: %d %.300s", r.status, r.body)
	}
	cA := gateCookieOf(enter(g.newPass(t), "shop.example"))
	if cA == nil {
		t.Fatal("room A's pass on its own host set no cookie")
	}
	for _, tc := range []struct {
		name    string
		cookie  *http.Cookie
		host    string
		roomHdr string
		status  int
	}{
		{"A's session on A's host", cA, "shop.example", "", 204},
		{"A's session on A's host, default port", cA, "SHOP.example:80", "", 204},
		{"B's session on A's host", cB, "shop.example", "", 401},
		{"B's session on B's host", cB, "other.example", "", 204},
		{"B's session, nginx names A", cB, "other.example", roomA, 401},
		{"B's session, nginx names B", cB, "shop.example", roomB, 204},
		{"A's session on another port", cA, "shop.example:8443", "", 401},
	} {
		hdr := map[string]string{"Host": tc.host}
		if tc.roomHdr != "" {
			hdr["X-Waitingroom-Room"] = tc.roomHdr
		}
		if r := g.do(t, "GET", "/gate/check", "", hdr, tc.cookie); r.status != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, r.status, tc.status)
		}
	}
}
