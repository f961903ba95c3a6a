package gatemode

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"waitingroom/server/room"
	"waitingroom/server/visitor"
	"waitingroom/views"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

// newTestGate returns a Gate whose pages are plain: their status and
// heading. mut sets its passes, sessions and rooms.
func newTestGate(t *testing.T, mut func(*Deps)) *Gate {
	t.Helper()
	signer, err := visitor.NewSigner([]byte("test-secret-key-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	d := Deps{
		Signer:      signer,
		KeyFails:    noKeyFails{},
		AllowReport: func(string) bool { return true },
		Fail: func(w http.ResponseWriter, r *http.Request, err error) {
			response.Failer{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}.JSON(w, r, response.ScopeAny, err)
		},
		Page: func(w http.ResponseWriter, r *http.Request, p views.ErrorPage, base string) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(p.Status)
			fmt.Fprintln(w, p.Heading)
		},
		Text: func(r *http.Request) views.Messages {
			return views.For(views.Negotiate(r.Header.Get("Accept-Language")))
		},
		Origin:   func(*http.Request) string { return "https://queue.example" },
		Client:   func(r *http.Request) string { return request.ClientNet(request.ClientIP(r, nil), 64) },
		Recover:  func(next http.Handler) http.Handler { return next },
		CSS:      "/static/app.css",
		Checks:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gate_checks"}, []string{"outcome"}),
		Rejected: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rejected"}, []string{"reason"}),
		Registry: prometheus.NewRegistry(),
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if mut != nil {
		mut(&d)
	}
	return New(d)
}

// noKeyFails throttles no key.
type noKeyFails struct{}

func (noKeyFails) Refuse(http.ResponseWriter, string, string, string) bool { return false }
func (noKeyFails) Fail(string)                                             {}

// TestGateOff: with no passes or no sessions, gate mode is off: its
// endpoints answer 404 gate_off, the callback a 404 page and the check 401.
func TestGateOff(t *testing.T) {
	gt := newTestGate(t, nil)
	keyed := func(w http.ResponseWriter, r *http.Request, _ room.Settings) { w.WriteHeader(http.StatusTeapot) }
	for _, tt := range []struct {
		name, method, target string
		handler              http.HandlerFunc
		status               int
		code                 string
	}{
		{"jwks", "GET", "/.well-known/jwks.json", gt.JWKS, http.StatusNotFound, "gate_off"},
		{"redeem", "POST", "/api/rooms/r/passes/redeem", gt.RoomKeyOnly(keyed), http.StatusNotFound, "gate_off"},
		{"enter", "POST", "/_waitingroom/enter", gt.Enter, http.StatusNotFound, ""},
		{"check", "GET", "/gate/check", gt.Check, http.StatusUnauthorized, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			tt.handler(w, httptest.NewRequest(tt.method, tt.target, nil))
			if w.Code != tt.status {
				t.Fatalf("%s %s: %d, want %d", tt.method, tt.target, w.Code, tt.status)
			}
			if tt.code != "" && !strings.Contains(w.Body.String(), `"`+tt.code+`"`) {
				t.Fatalf("%s %s: %s, want code %s", tt.method, tt.target, w.Body, tt.code)
			}
		})
	}
}
