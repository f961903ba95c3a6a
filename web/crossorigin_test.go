package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"waitingroom/web/response"
)

// TestCrossSiteRequestsAreRefused plays another site that makes a
// buyer's browser post to the room: every state-changing
// request it can forge is refused with 403, sets no cookie, and the buyer
// keeps their ticket and entry token, and then orders.
func TestCrossSiteRequestsAreRefused(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 5, nil)
	h.web.origins.AddTrustedOrigin("https://shop.example")
	c, tok := h.admitted(t)
	q := "/api/rooms/" + h.room + "/queue"
	form := "application/x-www-form-urlencoded"
	crossSite := map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	attacks := []struct {
		name, method, path, body string
		hdr                      map[string]string
		cookie                   *http.Cookie
		html                     bool
	}{
		{"join form", "POST", "/r/" + h.room + "/join", "", with(crossSite, "Content-Type", form), nil, true},
		{"join form, text/plain", "POST", "/r/" + h.room + "/join", "a=b", with(crossSite, "Content-Type", "text/plain"), nil, true},
		{"join form from an old browser (Origin only)", "POST", "/r/" + h.room + "/join", "", map[string]string{"Origin": "http://evil.example", "Content-Type": form}, nil, true},
		{"join form in Korean", "POST", "/r/" + h.room + "/join", "", with(crossSite, "Content-Type", form, "Accept-Language", "ko"), nil, true},
		{"enter, text/plain", "POST", q, "{}", with(crossSite, "Content-Type", "text/plain"), nil, false},
		{"enter from a sibling site", "POST", q, "", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://shop.evil.example"}, nil, false},
		{"enter from a sandboxed frame", "POST", q, "", map[string]string{"Origin": "null"}, nil, false},
		{"leave with the buyer's cookie", "DELETE", q, "", crossSite, c, false},
		{"JSON order with the buyer's pass", "POST", "/api/rooms/" + h.room + "/orders", `{"quantity":1}`, with(crossSite, "X-Entry-Token", tok), c, false},
		{"order form with the buyer's pass", "POST", "/r/" + h.room + "/order", "entry_token=" + tok, with(crossSite, "Content-Type", form), c, true},
		{"admin write with the admin's token", "PUT", "/api/admin/rooms/" + h.room, `{"paused":true}`, with(crossSite, "Authorization", "Bearer "+testAdminToken), nil, false},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			r := h.do(t, a.method, a.path, a.body, a.hdr, a.cookie)
			if r.status != http.StatusForbidden || r.header.Get("Set-Cookie") != "" {
				t.Fatalf("%d (Set-Cookie %q) %s, want 403 without a cookie", r.status, r.header.Get("Set-Cookie"), r.body)
			}
			if a.html {
				msg := messages(&http.Request{Header: http.Header{"Accept-Language": {a.hdr["Accept-Language"]}}}).ErrCrossSite
				if !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !strings.Contains(r.body, msg) {
					t.Fatalf("want the HTML page saying %q, got %s", msg, r.body)
				}
				return
			}
			var e response.Error
			r.json(t, &e)
			if e.Code != "cross_site" || e.Message == "" {
				t.Fatalf("want the JSON error cross_site, got %s", r.body)
			}
		})
	}
	if st, _ := h.eng.Stats(context.Background(), h.room); st.Issued != 1 {
		t.Fatalf("refused requests changed the line: %+v", st)
	}
	if set, _ := h.eng.Room(context.Background(), h.room); set.Paused {
		t.Fatal("a cross-site admin write paused the room")
	}

	// The browser's own requests, and tools that are no browser, pass.
	allowed := []struct {
		name string
		hdr  map[string]string
	}{
		{"same origin", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": h.srv.URL}},
		{"typed in the address bar", map[string]string{"Sec-Fetch-Site": "none"}},
		{"old browser, this host", map[string]string{"Origin": h.srv.URL}},
		{"an ALLOWED_ORIGINS origin", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://shop.example"}},
		{"no browser at all", nil},
	}
	for _, a := range allowed {
		if r := h.do(t, "POST", q, "", a.hdr, nil); r.status != 200 || r.cookie() == nil {
			t.Fatalf("%s: %d %s, want 200 with a cookie", a.name, r.status, r.body)
		}
	}

	// The buyer still holds their pass, and orders with it.
	var p struct {
		Status     string  `json:"status"`
		EntryToken *string `json:"entryToken"`
	}
	h.do(t, "GET", q+"/position", "", nil, c).json(t, &p)
	if p.Status != "READY" || p.EntryToken == nil || *p.EntryToken != tok {
		t.Fatalf("after the attacks the buyer sees %+v", p)
	}
	if r := h.do(t, "POST", "/api/rooms/"+h.room+"/orders", `{"quantity":1}`, map[string]string{"X-Entry-Token": tok, "Sec-Fetch-Site": "same-origin"}, c); r.status != 201 {
		t.Fatalf("the buyer's order: %d %s", r.status, r.body)
	}
}

// TestJSONAPITakesOnlyJSON refuses bodies of any other type on POST with
// 415 (a form can send text/plain, urlencoded and multipart bodies
// anywhere), while an empty body of any type, which the page's own enter
// sends, passes.
func TestJSONAPITakesOnlyJSON(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	q := "/api/rooms/" + h.room + "/queue"
	orders := "/api/rooms/" + h.room + "/orders"
	tests := []struct {
		name, path, body, ctype string
		status                  int
	}{
		{"text/plain", q, `{"a":1}`, "text/plain", 415},
		{"urlencoded", q, "a=1", "application/x-www-form-urlencoded", 415},
		{"multipart", q, "--x\r\n\r\n--x--", "multipart/form-data; boundary=x", 415},
		{"no type", q, "{}", "", 415},
		{"order as text/plain", orders, `{"quantity":1}`, "text/plain", 415},
		{"empty text/plain", q, "", "text/plain", 200},
		{"empty, no type", q, "", "", 200},
		{"JSON", q, "{}", "application/json", 200},
		{"JSON with a charset", q, "{}", "application/json; charset=utf-8", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(t, "POST", tt.path, tt.body, map[string]string{"Content-Type": tt.ctype}, nil)
			if r.status != tt.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, tt.status)
			}
			if tt.status == 415 && (r.cookie() != nil || !strings.Contains(r.body, "unsupported_media_type")) {
				t.Fatalf("refused body: %v %s", r.header, r.body)
			}
		})
	}
	if st, _ := h.eng.Stats(context.Background(), h.room); st.Issued != 4 {
		t.Fatalf("%d tickets, want the 4 accepted enters", st.Issued)
	}
}
