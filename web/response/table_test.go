package response

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/views"
)

// TestRulesAnswer: every row takes its example, wrapped too, with a
// status and a stable code, and each of its texts is non-empty in Korean
// and in English.
func TestRulesAnswer(t *testing.T) {
	rules := Rules()
	names := map[string]bool{}
	for _, rule := range rules {
		t.Run(rule.Name, func(t *testing.T) {
			if names[rule.Name] {
				t.Fatalf("two rows named %q", rule.Name)
			}
			names[rule.Name] = true
			if rule.Example == nil {
				t.Fatal("no example")
			}
			if rule.Status < 400 || rule.Status > 599 || rule.Code == "" {
				t.Fatalf("status %d, code %q", rule.Status, rule.Code)
			}
			if rule.Message == "" && rule.Body == nil {
				t.Fatal("no API message")
			}
			if rule.Match != nil {
				got, ok := lookup(rules, rule.Scope, fmt.Errorf("wrapped: %w", rule.Example))
				if !ok || got.Name != rule.Name {
					t.Fatalf("its example is taken by %q (%v)", got.Name, ok)
				}
			}
			for _, lang := range []string{"ko", "en"} {
				m := views.For(lang)
				if rule.Text != nil && rule.Text(m, rule.Example) == "" {
					t.Errorf("%s: empty page text", lang)
				}
				if rule.Heading != nil && rule.Heading(m) == "" {
					t.Errorf("%s: empty page heading", lang)
				}
				if rule.Console != nil && rule.Console(lang) == "" {
					t.Errorf("%s: empty console text", lang)
				}
			}
		})
	}
}

// TestLookup: the scope picks the row of an error that answers
// differently there, and its fallback for an unknown error.
func TestLookup(t *testing.T) {
	tests := []struct {
		name   string
		scope  Scope
		err    error
		known  bool
		status int
		code   string
	}{
		{"room not found", ScopeAny, room.ErrNotFound, true, http.StatusNotFound, "room_not_found"},
		{"an order's unknown product", ScopeOrder, order.ErrProductNotFound, true, http.StatusBadRequest, "product_not_found"},
		{"the catalogue's unknown product", ScopeCatalog, order.ErrProductNotFound, true, http.StatusNotFound, "product_not_found"},
		{"paused before waiting", ScopeOrder, &order.WaitError{Err: order.ErrTokenPaused}, true, http.StatusTooManyRequests, "token_paused"},
		{"waiting", ScopeOrder, &order.WaitError{Err: order.ErrTokenInUse}, true, http.StatusConflict, "token_in_use"},
		{"a pass being redeemed", ScopeAny, &queue.WaitError{Err: queue.ErrTokenInUse}, true, http.StatusServiceUnavailable, "pass_busy"},
		{"unknown", ScopeAny, errors.New("boom"), false, http.StatusServiceUnavailable, "unavailable"},
		{"unknown order", ScopeOrder, errors.New("boom"), false, http.StatusServiceUnavailable, "unavailable"},
		{"unknown catalogue", ScopeCatalog, errors.New("boom"), false, http.StatusServiceUnavailable, "unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, known := lookup(Rules(), tt.scope, tt.err)
			if known != tt.known || r.Status != tt.status || r.Code != tt.code {
				t.Fatalf("%q: known %v, %d %s; want %v, %d %s", r.Name, known, r.Status, r.Code, tt.known, tt.status, tt.code)
			}
		})
	}
}
