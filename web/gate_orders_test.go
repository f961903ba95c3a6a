package web

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"waitingroom/web/response"
)

// TestGateRoomRefusesBuiltInOrders: a room that sends its buyers to a
// shop takes no order on its own order path, JSON or form, and claims no
// token: the buyer's pass still hands off to the shop.
func TestGateRoomRefusesBuiltInOrders(t *testing.T) {
	g := newGateHarness(t, nil)
	c, tok := g.readyVisitor(t)
	r := g.do(t, "POST", "/api/rooms/"+g.room+"/orders", `{"quantity":1}`, map[string]string{"X-Entry-Token": tok}, c)
	var e response.Error
	json.Unmarshal([]byte(r.body), &e)
	if r.status != 409 || e.Code != "gate_on" {
		t.Fatalf("JSON order: %d %s", r.status, r.body)
	}
	for _, tc := range []struct{ lang, words string }{
		{"en", "orders are taken at the shop"},
		{"ko", "주문은 쇼핑몰에서 받습니다"},
	} {
		r := g.form(t, "/r/"+g.room+"/order", url.Values{"entry_token": {tok}}, map[string]string{"Accept-Language": tc.lang}, c)
		if r.status != 409 || !strings.Contains(r.body, tc.words) {
			t.Fatalf("form order (%s): %d %.800s", tc.lang, r.status, r.body)
		}
	}
	if p := passOf(t, g.handoff(t, c, tok)); p == "" {
		t.Fatal("no pass after the refused orders")
	}
}
