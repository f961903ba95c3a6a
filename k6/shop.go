package k6

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// GateCookie is the session cookie every gate guard sets on the shop's
// host; its value is "<room>.<sessionID>".
const GateCookie = "wr_gate"

// Shop is a stand-in shop for the gate drills and benchmarks. It serves a
// home page (GET /), a checkout (GET /checkout) that records every buyer
// who reaches it, and POST /checkout/done, which ends the buyer's session
// through End. The guard under test stands in front of /checkout.
type Shop struct {
	// End ends the request's session at waitingroom, as the guard in
	// front of the shop does it (nil: done ends nothing).
	End func(w http.ResponseWriter, r *http.Request) error

	mu        sync.Mutex
	checkouts []Checkout
}

// Checkout is one request that reached the shop's checkout.
type Checkout struct {
	// Session is the session id of the request's wr_gate cookie ("" when
	// it came without one).
	Session string
	At      time.Time
}

// Handler returns the shop's routes.
func (s *Shop) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "the shop\n")
	})
	mux.HandleFunc("GET /checkout", func(w http.ResponseWriter, r *http.Request) {
		_, id := SessionOf(r)
		s.mu.Lock()
		s.checkouts = append(s.checkouts, Checkout{Session: id, At: time.Now()})
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, "checkout\n")
	})
	mux.HandleFunc("POST /checkout/done", func(w http.ResponseWriter, r *http.Request) {
		if s.End != nil {
			if err := s.End(w, r); err != nil {
				http.Error(w, "shop: end the session: "+err.Error(), http.StatusBadGateway)
				return
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})
	return mux
}

// Checkouts returns the checkouts so far, in the order they happened.
func (s *Shop) Checkouts() []Checkout {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Checkout(nil), s.checkouts...)
}

// SessionOf returns the room and session id of r's wr_gate cookie.
func SessionOf(r *http.Request) (room, id string) {
	c, err := r.Cookie(GateCookie)
	if err != nil {
		return "", ""
	}
	room, id, _ = strings.Cut(c.Value, ".")
	return room, id
}

// EndSessionAPI returns a Shop.End that ends the request's session through
// waitingroom's API (POST /api/rooms/{room}/sessions/{id}/end with the
// room's API key): what a shop behind nginx or the reverse proxy does.
func EndSessionAPI(client *http.Client, roomURL, room, apiKey string) func(http.ResponseWriter, *http.Request) error {
	return func(_ http.ResponseWriter, r *http.Request) error {
		cookieRoom, id := SessionOf(r)
		if id == "" || cookieRoom != room {
			return fmt.Errorf("no session of room %s", room)
		}
		return EndSession(r.Context(), client, roomURL, room, apiKey, id)
	}
}

// EndSession ends session id of room at waitingroom.
func EndSession(ctx context.Context, client *http.Client, roomURL, room, apiKey, id string) error {
	u := strings.TrimRight(roomURL, "/") + "/api/rooms/" + url.PathEscape(room) + "/sessions/" + url.PathEscape(id) + "/end"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return fmt.Errorf("gate: end session: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("gate: end session: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("gate: end session: %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	return nil
}
