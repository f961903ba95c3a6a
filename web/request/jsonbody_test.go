package request

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDecodeStrict: one JSON object of known fields is read; anything
// else is answered 400, and a body over the cap 413.
func TestDecodeStrict(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		limit  int64
		ok     bool
		status int
		code   string
	}{
		{name: "object", body: `{"pass":"p"}`, ok: true},
		{name: "white space after", body: "{\"pass\":\"p\"}\n \t", ok: true},
		{name: "unknown field", body: `{"pass":"p","x":1}`, status: 400, code: "bad_json"},
		{name: "two objects", body: `{"pass":"p"}{"pass":"q"}`, status: 400, code: "bad_json"},
		{name: "bad UTF-8", body: "{\"pass\":\"\xff\"}", status: 400, code: "bad_json"},
		{name: "not JSON", body: `pass=p`, status: 400, code: "bad_json"},
		{name: "too large", body: `{"pass":"` + strings.Repeat("p", 100) + `"}`, limit: 20, status: 413, code: "body_too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			r := httptest.NewRequest("POST", "/api/x", strings.NewReader(tt.body))
			if tt.limit > 0 {
				r.Body = http.MaxBytesReader(w, r.Body, tt.limit)
			}
			var v struct {
				Pass string `json:"pass"`
			}
			if ok := DecodeStrict(w, r, &v, `{"pass":"…"}`); ok != tt.ok {
				t.Fatalf("ok %v, want %v: %d %s", ok, tt.ok, w.Code, w.Body)
			}
			if tt.ok {
				if v.Pass != "p" {
					t.Fatalf("pass %q", v.Pass)
				}
				return
			}
			var e struct {
				Code string `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code != tt.status || e.Code != tt.code {
				t.Fatalf("%d %s, want %d %s", w.Code, w.Body, tt.status, tt.code)
			}
		})
	}
}
