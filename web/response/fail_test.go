package response

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"waitingroom/server/order"
	"waitingroom/server/room"
	"waitingroom/views"
)

// recorded is what a test's Failer was asked to answer.
type recorded struct {
	page    *views.ErrorPage
	console string
	log     bytes.Buffer
}

func testFailer(rec *recorded) Failer {
	return Failer{
		Log: slog.New(slog.NewTextHandler(&rec.log, nil)),
		Page: func(w http.ResponseWriter, _ *http.Request, p views.ErrorPage) {
			rec.page = &p
			w.WriteHeader(p.Status)
			_, _ = w.Write([]byte(p.Heading + "\n" + p.Message))
		},
		ConsoleLang: func(r *http.Request) string { return views.Negotiate(r.Header.Get("Accept-Language")) },
		Console: func(w http.ResponseWriter, _ *http.Request, status int, msg string) {
			rec.console = msg
			w.WriteHeader(status)
			_, _ = w.Write([]byte(msg))
		},
	}
}

// TestFailAnswersAsAsked: the path and Accept choose JSON, the console's
// page or the buyer's page, in the visitor's language.
func TestFailAnswersAsAsked(t *testing.T) {
	tests := []struct {
		name, method, path, accept, lang string
		err                              error
		status                           int
		json                             string // the JSON body; "" for a page
		page                             string // the page's or the console's message
	}{
		{name: "API", method: "GET", path: "/api/rooms/drop", err: room.ErrNotFound, status: 404,
			json: `{"error":"room_not_found","message":"There is no room named \"drop\"."}` + "\n"},
		{name: "JSON asked", method: "GET", path: "/r/drop", accept: "application/json", err: room.ErrNotFound, status: 404,
			json: `{"error":"room_not_found","message":"There is no room named \"drop\"."}` + "\n"},
		{name: "page in English", method: "GET", path: "/r/drop", accept: "text/html,application/json", lang: "en", err: room.ErrNotFound, status: 404,
			page: views.For("en").NoSuchRoom},
		{name: "page in Korean", method: "GET", path: "/r/drop", lang: "ko", err: room.ErrNotFound, status: 404,
			page: views.For("ko").NoSuchRoom},
		{name: "console", method: "GET", path: "/admin/rooms/drop", lang: "en", err: room.ErrNotFound, status: 404,
			page: views.RoomsTextFor("en").ErrNoRoom},
		{name: "console in Korean", method: "GET", path: "/admin/rooms/drop/products/1", lang: "ko", err: order.ErrProductNotFound, status: 404,
			page: views.RoomsTextFor("ko").ErrNoProduct},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorded
			mux := http.NewServeMux()
			mux.HandleFunc("/api/rooms/{room}", func(w http.ResponseWriter, r *http.Request) { testFailer(&rec).Fail(w, r, tt.err) })
			mux.HandleFunc("/r/{room}", func(w http.ResponseWriter, r *http.Request) { testFailer(&rec).Fail(w, r, tt.err) })
			mux.HandleFunc("/admin/", func(w http.ResponseWriter, r *http.Request) { testFailer(&rec).Fail(w, r, tt.err) })
			r := httptest.NewRequest(tt.method, tt.path, nil)
			r.Header.Set("Accept", tt.accept)
			r.Header.Set("Accept-Language", tt.lang)
			w := httptest.NewRecorder()
			mux.ServeHTTP(w, r)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d", w.Code, tt.status)
			}
			if tt.json != "" {
				if w.Body.String() != tt.json || w.Header().Get("Content-Type") != "application/json; charset=utf-8" {
					t.Fatalf("body %q (%s), want %q", w.Body, w.Header().Get("Content-Type"), tt.json)
				}
				return
			}
			if !strings.Contains(w.Body.String(), tt.page) {
				t.Fatalf("body %q, want %q", w.Body, tt.page)
			}
		})
	}
}

// TestFailUnknown: an error no row takes answers 503 unavailable with a
// Retry-After, is logged with the request, and its text never reaches the
// client.
func TestFailUnknown(t *testing.T) {
	secret := errors.New("dial tcp 10.0.0.7:6379: connection refused")
	for _, path := range []string{"/api/rooms/drop", "/r/drop", "/admin/rooms/drop"} {
		t.Run(path, func(t *testing.T) {
			var rec recorded
			r := httptest.NewRequest("POST", path, nil)
			w := httptest.NewRecorder()
			testFailer(&rec).Fail(w, r, secret)
			if w.Code != http.StatusServiceUnavailable {
				t.Fatalf("status %d, want 503", w.Code)
			}
			if strings.Contains(w.Body.String(), "10.0.0.7") {
				t.Fatalf("the error's text leaked: %q", w.Body)
			}
			if !strings.Contains(rec.log.String(), "request failed") || !strings.Contains(rec.log.String(), "10.0.0.7") ||
				!strings.Contains(rec.log.String(), "path="+path) || !strings.Contains(rec.log.String(), "method=POST") {
				t.Fatalf("log %q", rec.log.String())
			}
			if path == "/api/rooms/drop" && w.Header().Get("Retry-After") != "2" {
				t.Fatalf("Retry-After %q, want 2", w.Header().Get("Retry-After"))
			}
		})
	}
}

// TestHTMLOptions: an order's page offers its form again where a retry
// can succeed, says when, and a pass that ran out offers to rejoin.
func TestHTMLOptions(t *testing.T) {
	repost := &views.Repost{Action: "/r/drop/order"}
	tests := []struct {
		name       string
		method     string
		err        error
		status     int
		retryAfter string
		repost     bool
		retry      bool
		rejoin     bool
	}{
		{name: "rate limited", method: "POST", err: &order.RateLimitedError{RetryAfter: 1500 * time.Millisecond}, status: 429, retryAfter: "2", repost: true},
		{name: "token gone", method: "POST", err: order.ErrTokenInvalid, status: 401, rejoin: true},
		{name: "sold out", method: "POST", err: order.ErrSoldOut, status: 409},
		{name: "unknown", method: "POST", err: errors.New("boom"), status: 503, repost: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorded
			r := httptest.NewRequest(tt.method, "/r/drop/order", nil)
			w := httptest.NewRecorder()
			testFailer(&rec).HTML(w, r, tt.err, PageOptions{Scope: ScopeOrder, Room: "drop", Repost: repost})
			p := rec.page
			if p == nil || p.Status != tt.status || (p.RetryPost != nil) != tt.repost || p.Retry != tt.retry || p.Rejoin != tt.rejoin {
				t.Fatalf("page %+v", p)
			}
			if p.Heading == "" || p.Room != "drop" {
				t.Fatalf("heading %q, room %q", p.Heading, p.Room)
			}
			if got := w.Header().Get("Retry-After"); got != tt.retryAfter {
				t.Fatalf("Retry-After %q, want %q", got, tt.retryAfter)
			}
		})
	}
}

// TestJSONBodies: the errors that carry figures answer them.
func TestJSONBodies(t *testing.T) {
	var rec recorded
	r := httptest.NewRequest("POST", "/api/rooms/drop/orders", nil)
	r.Header.Set("Accept-Language", "en")
	w := httptest.NewRecorder()
	testFailer(&rec).JSON(w, r, ScopeOrder, &order.StockError{Left: 3})
	var s StockError
	if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil || w.Code != 409 || s.Code != "insufficient_stock" || s.Left != 3 || s.Message == "" {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
}
