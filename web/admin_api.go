package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
)

func digest(s string) []byte {
	d := sha256.Sum256([]byte(s))
	return d[:]
}

// Failed admin authentication is throttled per client network: at most
// adminFailures failures in any adminFailWindow, then 429 until the oldest
// one ages out.
const (
	adminFailures   = 10
	adminFailWindow = time.Minute
)

// adminOnly lets through requests bearing ADMIN_TOKEN. The token is
// compared in constant time through its digest, so neither its content nor
// its length leaks. A client that failed too often is refused before its
// token is even looked at.
func (s *Server) adminOnly(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.admin == nil {
			writeError(w, http.StatusForbidden, "admin_disabled", "The admin API is disabled: set ADMIN_TOKEN to enable it.")
			return
		}
		client := s.clientKey(r)
		if wait := s.adminFails.blocked(client, time.Now()); wait > 0 {
			s.metrics.Rejected.WithLabelValues("admin_auth").Inc()
			w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(wait)))
			writeError(w, http.StatusTooManyRequests, "rate_limited", "Too many failed admin authentications from your network. Retry later.")
			return
		}
		given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare(digest(given), s.admin) != 1 {
			s.adminFails.fail(client, time.Now())
			w.Header().Set("WWW-Authenticate", `Bearer realm="waitingroom-admin"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", "A valid admin bearer token is required.")
			return
		}
		next(w, r)
	}
}

// roomView is the admin API's answer: settings and live counters.
type roomView struct {
	Name     string        `json:"name"`
	Settings room.Settings `json:"settings"`
	Live     queue.Stats   `json:"live"`
}

// putRoom creates a room or updates some of its settings: fields left out
// keep their current value (or the default, for a new room).
func (s *Server) putRoom(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	var p struct {
		room.Patch
		// SoldOut false reopens a room that sold out (after a restock).
		SoldOut *bool `json:"soldOut"`
	}
	if err := decodeJSON(r.Body, &p); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", "The request body is too large.")
		case errors.Is(err, errTrailing):
			writeError(w, http.StatusBadRequest, "bad_json", "The body must hold exactly one JSON object.")
		default:
			writeError(w, http.StatusBadRequest, "bad_json", "The body must be a JSON object of room settings: "+err.Error())
		}
		return
	}
	cur, err := s.rooms.Room(r.Context(), name)
	created := errors.Is(err, room.ErrNotFound)
	switch {
	case created:
		cur = room.Defaults(name)
	case err != nil:
		s.fail(w, r, err)
		return
	}
	next := p.Patch.Apply(cur)
	if err := next.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_settings", err.Error())
		return
	}
	if err := s.rooms.SaveRoom(r.Context(), name, next); err != nil {
		s.fail(w, r, err)
		return
	}
	if p.SoldOut != nil {
		if err := s.rooms.SetSoldOut(r.Context(), name, *p.SoldOut); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	s.log.Info("room saved", "room", name, "created", created, "rate", next.Rate, "maxActive", next.MaxActive, "paused", next.Paused)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	s.writeRoom(w, r, status, name, next)
}

func (s *Server) getRoom(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	set, err := s.rooms.Room(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeRoom(w, r, http.StatusOK, name, set)
}

func (s *Server) writeRoom(w http.ResponseWriter, r *http.Request, status int, name string, set room.Settings) {
	st, err := s.rooms.Stats(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, status, roomView{Name: name, Settings: set, Live: st})
}
