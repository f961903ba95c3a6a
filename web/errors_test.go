package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"waitingroom/web/response"
)

// TestHTMLPagesRefuseFraming: no HTML answer may be framed by another
// site (clickjacking): every page sends frame-ancestors 'none' and
// X-Frame-Options DENY.
func TestHTMLPagesRefuseFraming(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	c := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil).cookie()
	pages := []struct {
		name, method, path string
		hdr                map[string]string
		status             int
	}{
		{"room page", "GET", "/r/" + h.room, nil, 200},
		{"status page", "GET", "/r/" + h.room + "/status", nil, 200},
		{"unknown room", "GET", "/r/no-such-room-x", nil, 404},
		{"bad room name", "GET", "/r/Bad_Room", nil, 400},
		{"unknown order", "GET", "/r/" + h.room + "/orders/1", nil, 404},
		{"refused cross-site form", "POST", "/r/" + h.room + "/join", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"order form error", "POST", "/r/" + h.room + "/order", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 401},
	}
	for _, p := range pages {
		r := h.do(t, p.method, p.path, "", p.hdr, c)
		csp := r.header.Get("Content-Security-Policy")
		if r.status != p.status || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %s, want an HTML %d", p.name, r.status, r.header.Get("Content-Type"), p.status)
		}
		if !strings.Contains(csp, "frame-ancestors 'none'") || r.header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: CSP %q, X-Frame-Options %q: the page can be framed", p.name, csp, r.header.Get("X-Frame-Options"))
		}
	}
}

// TestWriteErrorKeepsRetryAfter: a computed Retry-After survives the JSON
// error writer, which only fills in a default.
func TestWriteErrorKeepsRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		set    string
		status int
		want   string
	}{
		{"100", 429, "100"},
		{"7", 503, "7"},
		{"", 429, "2"},
		{"", 503, "2"},
		{"", 400, ""},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		if tt.set != "" {
			w.Header().Set("Retry-After", tt.set)
		}
		response.WriteError(w, tt.status, "x", "y")
		if got := w.Header().Get("Retry-After"); got != tt.want {
			t.Errorf("status %d with Retry-After %q set: %q, want %q", tt.status, tt.set, got, tt.want)
		}
	}
}

// TestBadTextGets400: text that is not clean UTF-8 (control characters,
// bidirectional overrides, invalid bytes) in the Idempotency-Key or a UTM
// field, and trailing bytes after the JSON body, are the client's error:
// 400, before any database work, and the pass stays usable.
func TestBadTextGets400(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 5, nil)
	path := "/api/rooms/" + h.room + "/orders"
	c, tok := h.admitted(t)
	tests := []struct {
		name, body, key string
		code            string
	}{
		{"key: invalid UTF-8", `{}`, "k\xff\xfe", "bad_request"},
		{"key: a tab", `{}`, "k\tk", "bad_request"},
		{"key: right-to-left override", `{}`, "k\u202ek", "bad_request"},
		{"key: first-strong isolate", `{}`, "k\u2068k", "bad_request"},
		{"utm: right-to-left override", `{"utm":{"source":"ad\u202etxt.exe"}}`, "", "bad_request"},
		{"utm: left-to-right mark", `{"utm":{"medium":"a\u200eb"}}`, "", "bad_request"},
		{"utm: C1 control", `{"utm":{"campaign":"a\u0085b"}}`, "", "bad_request"},
		{"utm: line separator", `{"utm":{"term":"a\u2028b"}}`, "", "bad_request"},
		{"utm: NUL", `{"utm":{"content":"a\u0000b"}}`, "", "bad_request"},
		{"utm: invalid UTF-8", "{\"utm\":{\"source\":\"a\xffb\"}}", "", "bad_request"},
		{"trailing garbage", `{"quantity":1}x`, "", "bad_json"},
		{"a second object", `{"quantity":1}{"quantity":2}`, "", "bad_json"},
		{"a stray brace", `{"quantity":1}}`, "", "bad_json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do(t, "POST", path, tt.body, map[string]string{"X-Entry-Token": tok, "Idempotency-Key": tt.key}, c)
			var e response.Error
			r.json(t, &e)
			if r.status != 400 || e.Code != tt.code {
				t.Fatalf("%d %s, want 400 %s", r.status, r.body, tt.code)
			}
		})
	}
	// The order form drops a utm_* field of such text instead (it comes from
	// the page's address): TestOrderFormDropsBadUTM.
	// Clean text, trailing white space and a non-Latin campaign pass, with
	// the same pass.
	r := h.do(t, "POST", path, `{"quantity":1,"utm":{"campaign":"블랙프라이데이 – 50%"}}`+" \n", map[string]string{"X-Entry-Token": tok, "Idempotency-Key": "order-1 (retry)"}, c)
	if r.status != 201 {
		t.Fatalf("clean order: %d %s", r.status, r.body)
	}
}

// TestAdminPutRefusesTrailingBytes: the admin PUT takes exactly one JSON
// object.
func TestAdminPutRefusesTrailingBytes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	for _, body := range []string{`{"title":"x"}}`, `{"title":"x"}{}`, `{"title":"x"} y`} {
		if r := h.do(t, "PUT", "/api/admin/rooms/"+h.room, body, auth, nil); r.status != 400 || !strings.Contains(r.body, "bad_json") {
			t.Fatalf("admin PUT %q: %d %s", body, r.status, r.body)
		}
	}
}

func TestUnknownStaticFileIsAJSON404(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	for _, path := range []string{"/static/nope.js", "/static/", "/static/app.000000000000.js"} {
		r := h.do(t, "GET", path, "", nil, nil)
		var e response.Error
		r.json(t, &e)
		if r.status != 404 || e.Code != "not_found" || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
	}
}

// TestHEADEventsEntersNobody: a HEAD of the stream (a link checker, a
// monitor) learns it exists, and takes no ticket.
func TestHEADEventsEntersNobody(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	for range 3 {
		r := h.do(t, "HEAD", "/r/"+h.room+"/events", "", nil, nil)
		if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" || r.header.Get("Set-Cookie") != "" {
			t.Fatalf("HEAD events: %d %v", r.status, r.header)
		}
	}
	if r := h.do(t, "HEAD", "/r/no-such-room-x/events", "", nil, nil); r.status != 404 {
		t.Fatalf("HEAD events of an unknown room: %d", r.status)
	}
	if st, _ := h.eng.Stats(context.Background(), h.room); st.Issued != 0 {
		t.Fatalf("HEAD requests took %d tickets", st.Issued)
	}
}

// TestFallbacks: a trailing slash on a short link or a room redirects to
// the path without it, query kept; other unknown paths answer the HTML
// 404 page in the visitor's language; /api/ unknowns stay JSON.
func TestFallbacks(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	cases := []struct {
		name, method, path, lang string
		status                   int
		location, ctype, want    string
	}{
		{"short link slash", "GET", "/s/AbCdEfGh/?gclid=x&utm_term=a%20b", "en", 301, "/s/AbCdEfGh?gclid=x&utm_term=a%20b", "", ""},
		{"room slash", "GET", "/r/" + h.room + "/", "en", 301, "/r/" + h.room, "", ""},
		{"room slash, HEAD, query", "HEAD", "/r/" + h.room + "/?utm_source=kakao", "en", 301, "/r/" + h.room + "?utm_source=kakao", "", ""},
		{"room slash, POST", "POST", "/r/" + h.room + "/", "en", 404, "", "text/html", "There is nothing here"},
		{"unknown path, en", "GET", "/nope", "en", 404, "", "text/html", "There is no page at this address"},
		{"unknown path, ko", "GET", "/nope/deeper", "ko", 404, "", "text/html", "이 주소에는 페이지가 없습니다"},
		{"unknown under a room", "GET", "/r/" + h.room + "/nope", "en", 404, "", "text/html", "There is nothing here"},
		{"bare /s/", "GET", "/s/", "en", 404, "", "text/html", "There is nothing here"},
		{"api unknown", "GET", "/api/nope", "en", 404, "", "application/json", `"not_found"`},
		{"api slash", "GET", "/api/rooms/" + h.room + "/products/", "en", 404, "", "application/json", `"not_found"`},
		{"known path, other method", "PATCH", "/healthz", "en", 405, "", "application/json", `"method_not_allowed"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, h.srv.URL+tc.path, nil)
			req.Header.Set("Accept-Language", tc.lang)
			resp, err := noRedirects().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get("Location") != tc.location ||
				!strings.HasPrefix(resp.Header.Get("Content-Type"), tc.ctype) || !strings.Contains(string(b), tc.want) {
				t.Fatalf("%d %q %q: %.400s", resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("Content-Type"), b)
			}
		})
	}
}
