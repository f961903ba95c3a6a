package web

import (
	"net/url"
	"strings"
	"testing"
)

// TestOrderMoreThanLeft: an order for more than the stock left, while some
// is left, is 409 insufficient_stock saying how many are left, in the
// visitor's language, on the JSON API and on the page's order form, not
// "sold out"; the pass stays valid for a smaller order.
func TestOrderMoreThanLeft(t *testing.T) {
	h := newOrderHarness(t, 3, nil)
	tests := []struct {
		name, lang string
		form       bool
		text       string
	}{
		{"JSON, English", "en", false, "Only 3 left"},
		{"JSON, Korean", "ko", false, "남은 수량이 3개뿐"},
		{"form, English", "en", true, "Only 3 left"},
		{"form, Korean", "ko", true, "남은 수량이 3개뿐"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, tok := h.admitted(t)
			hdr := map[string]string{"Accept-Language": tt.lang, "X-Entry-Token": tok}
			path, body := "/api/rooms/"+h.room+"/orders", `{"quantity":4}`
			if tt.form {
				hdr["Content-Type"] = "application/x-www-form-urlencoded"
				path, body = "/r/"+h.room+"/order", url.Values{"entry_token": {tok}, "quantity": {"4"}}.Encode()
			}
			r := h.do(t, "POST", path, body, hdr, c)
			if r.status != 409 || !strings.Contains(r.body, tt.text) || strings.Contains(strings.ToLower(r.body), "sold out") {
				t.Fatalf("order of 4 with 3 left: %d %s, want 409 with %q", r.status, r.body, tt.text)
			}
			if !tt.form {
				var e struct {
					Code    string `json:"error"`
					Message string `json:"message"`
					Left    int64  `json:"left"`
				}
				r.json(t, &e)
				if e.Code != "insufficient_stock" || e.Left != 3 {
					t.Fatalf("JSON: %s, want insufficient_stock with left 3", r.body)
				}
			}
		})
	}
	c, tok := h.admitted(t)
	if r := h.do(t, "POST", "/api/rooms/"+h.room+"/orders", `{"quantity":3}`, map[string]string{"X-Entry-Token": tok}, c); r.status != 201 {
		t.Fatalf("order of the 3 left: %d %s", r.status, r.body)
	}
}
