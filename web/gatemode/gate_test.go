package gatemode

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

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
			response.WriteError(w, http.StatusInternalServerError, "internal", err.Error())
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
