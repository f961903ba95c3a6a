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
	"waitingroom/server/salelog"
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
			s.log.Warn("admin authentication failed", "client", client, "method", r.Method, "path", r.URL.Path)
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
	// PrequeueNetworks are the client networks (/24, /64) with the most
	// pre-queue entries, most first.
	PrequeueNetworks []queue.NetworkCount `json:"prequeueNetworks"`
}

// putRoom creates a room or updates some of its settings: fields left out
// keep their current value (or the default, for a new room). The settings
// are live in Redis at once and recorded in the database.
func (s *Server) putRoom(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	var p struct {
		room.Patch
		// SoldOut false reopens a room that sold out (after a restock).
		SoldOut *bool `json:"soldOut"`
	}
	if !decodeStrict(w, r, &p, "a JSON object of room settings") {
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
	var wasSoldOut bool
	if p.SoldOut != nil && !created {
		st, err := s.rooms.Stats(r.Context(), name)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		wasSoldOut = st.SoldOut
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
	if s.records != nil {
		s.records.Record(r.Context(), name, next) // a failure is logged and retried
	}
	s.log.Info("room saved", "room", name, "created", created, "rate", next.Rate, "maxActive", next.MaxActive, "paused", next.Paused)
	s.roomEvents(name, created, cur, next, wasSoldOut, p.SoldOut)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	s.writeRoom(w, r, status, name, next)
}

// roomEvents tells the sale log what an admin write changed.
func (s *Server) roomEvents(name string, created bool, cur, next room.Settings, wasSoldOut bool, soldOut *bool) {
	switch {
	case created:
		s.sale.Event(name, salelog.Opened, "by", "admin", "rate", next.Rate, "maxActive", next.MaxActive, "paused", next.Paused, "mode", next.Mode)
	case !cur.Paused && next.Paused:
		s.sale.Event(name, salelog.Paused, "by", "admin")
	case cur.Paused && !next.Paused:
		s.sale.Event(name, salelog.Resumed, "by", "admin")
	}
	if !created && cur.Rate != next.Rate {
		s.sale.Event(name, salelog.RateChanged, "by", "admin", "old", cur.Rate, "new", next.Rate)
	}
	switch {
	case soldOut == nil || *soldOut == wasSoldOut:
	case *soldOut:
		s.sale.Event(name, salelog.SoldOut, "by", "admin")
	default:
		s.sale.Event(name, salelog.Reopened, "by", "admin")
	}
}

// deleteRoom removes a room, its line and all its Redis keys, and its
// record; its products and orders stay in the database.
func (s *Server) deleteRoom(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	d, err := s.rooms.DeleteRoom(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if s.records != nil {
		s.records.Forget(r.Context(), name) // a failure is logged and retried
	}
	if !d.Existed {
		s.fail(w, r, room.ErrNotFound)
		return
	}
	s.sale.Event(name, salelog.Deleted, "by", "admin", "redisKeys", d.Keys)
	writeJSON(w, http.StatusOK, map[string]any{"room": name, "deleted": true, "redisKeys": d.Keys})
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

// topNetworks is how many client networks the admin room view lists.
const topNetworks = 20

func (s *Server) writeRoom(w http.ResponseWriter, r *http.Request, status int, name string, set room.Settings) {
	st, err := s.rooms.Stats(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	nets, err := s.rooms.Networks(r.Context(), name, topNetworks)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if nets == nil {
		nets = []queue.NetworkCount{}
	}
	writeJSON(w, status, roomView{Name: name, Settings: set, Live: st, PrequeueNetworks: nets})
}
