package web

import (
	"net/http"
	"strings"
	"testing"
	"waitingroom/web/gatemode"
)

// TestGateFormBodies: a malformed form body on the gate's form routes is
// 400; only one over the limit is 413.
func TestGateFormBodies(t *testing.T) {
	g := newGateHarness(t, nil)
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Host": testShopHost}
	for _, path := range []string{gatemode.EnterPath, "/r/" + g.room + "/pass", "/r/" + g.room + "/order"} {
		for _, tc := range []struct {
			name   string
			body   string
			status int
		}{
			{"malformed", "pass=%zz&next=/", http.StatusBadRequest},
			{"too large", "pass=" + strings.Repeat("a", 1<<20), http.StatusRequestEntityTooLarge},
		} {
			if r := g.do(t, "POST", path, tc.body, form, nil); r.status != tc.status {
				t.Errorf("%s %s: %d, want %d", path, tc.name, r.status, tc.status)
			}
		}
	}
}
