package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"waitingroom/server/admin"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/web/request"
	"waitingroom/web/response"
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
			response.WriteError(w, http.StatusForbidden, "admin_disabled", "The admin API is disabled: set ADMIN_TOKEN to enable it.")
			return
		}
		client := s.clientKey(r)
		if s.refuseThrottled(w, s.adminFails, client, "admin_auth", "Too many failed admin authentications from your network. Retry later.") {
			return
		}
		given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare(digest(given), s.admin) != 1 {
			s.adminFails.fail(client, time.Now())
			s.log.Warn("admin authentication failed", "client", client, "method", r.Method, "path", r.URL.Path)
			w.Header().Set("WWW-Authenticate", `Bearer realm="waitingroom-admin"`)
			response.WriteError(w, http.StatusUnauthorized, "unauthorized", "A valid admin bearer token is required.")
			return
		}
		next(w, r)
	}
}

// refuseThrottled answers 429 when client failed to authenticate too
// often lately (fails), counting the refusal under label, and reports
// whether it did. A client that failed too often is refused before its
// credential is even looked at.
func (s *Server) refuseThrottled(w http.ResponseWriter, fails *failures, client, label, msg string) bool {
	wait := fails.blocked(client, time.Now())
	if wait <= 0 {
		return false
	}
	s.metrics.Rejected.WithLabelValues(label).Inc()
	w.Header().Set("Retry-After", strconv.Itoa(response.RetrySeconds(wait)))
	response.WriteError(w, http.StatusTooManyRequests, "rate_limited", msg)
	return true
}

// adminSettings are a room's settings as the admin API shows them: the
// gate's API key hash is left out, and only whether there is a key said.
type adminSettings struct {
	room.Settings
	APIKeySet bool `json:"apiKeySet"`
	// ReadySpreadDefaultMs is the server's spread of one tick's turns,
	// which a room whose readySpreadMs is null follows.
	ReadySpreadDefaultMs int `json:"readySpreadDefaultMs"`
}

func (s *Server) adminView(set room.Settings) adminSettings {
	v := adminSettings{Settings: set, APIKeySet: set.Gate.APIKeyHash != "", ReadySpreadDefaultMs: s.readySpreadDefaultMs()}
	v.Settings.Gate.APIKeyHash = ""
	return v
}

// roomView is the admin API's answer: settings and live counters.
type roomView struct {
	Name     string        `json:"name"`
	Settings adminSettings `json:"settings"`
	// Live is null when a save's answer could not read it (LiveError
	// says so); the settings above are saved all the same.
	Live      *queue.Stats `json:"live"`
	LiveError string       `json:"liveError,omitempty"`
	// PrequeueNetworks are the client networks (/24, /64) with the most
	// pre-queue entries, most first, flagged from NetworkFlagJoins on.
	PrequeueNetworks []networkView `json:"prequeueNetworks"`
	// Warnings are said when a write did something to look at: a room
	// created under a name that products are already attached to.
	Warnings []string `json:"warnings,omitempty"`
	// Controller is the adaptive controller's last decision, when the
	// room's adaptive admission is on. A manual rate (a PUT that changes
	// "rate" without "adaptive") turns it off: settings.adaptive is false
	// and this is left out until "adaptive": true again.
	Controller *controllerView `json:"controller,omitempty"`
}

// controllerView is the adaptive controller's state in the admin API.
type controllerView struct {
	// Rate is the rate as set now, by the controller or at the last PUT.
	Rate float64 `json:"rate"`
	// Reason is the last decision's (adapt.Reasons), "" before the first.
	Reason string `json:"reason"`
	// At is when the last decision was applied; absent before the first.
	At *time.Time `json:"at,omitempty"`
	// Decisions counts the decisions applied, changes and holds.
	Decisions int64 `json:"decisions"`
	// History is the last adminHistoryLen changes, newest first: every
	// decision that changed the rate, and every change of reason.
	History []adaptChangeView `json:"history"`
}

// adminHistoryLen bounds the controller's history in the admin API.
const adminHistoryLen = 50

// adaptChangeView is one change of the controller in the admin API.
type adaptChangeView struct {
	At     time.Time `json:"at"`
	From   float64   `json:"from"`
	To     float64   `json:"to"`
	Reason string    `json:"reason"`
	// P95Ms, ErrorRate and Samples are the signal it was decided on.
	P95Ms     int64   `json:"p95Ms"`
	ErrorRate float64 `json:"errorRate"`
	Samples   int64   `json:"samples"`
}

// adaptChangeViews are changes as the admin API shows them.
func adaptChangeViews(cs []queue.AdaptChange) []adaptChangeView {
	out := make([]adaptChangeView, len(cs))
	for i, c := range cs {
		out[i] = adaptChangeView{At: c.At.UTC(), From: c.From, To: c.To, Reason: c.Reason,
			P95Ms: c.P95.Milliseconds(), ErrorRate: c.ErrorRate, Samples: c.Samples}
	}
	return out
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
	if !request.DecodeStrict(w, r, &p, "a JSON object of room settings") {
		return
	}
	done, err := s.roomWrites.Save(r.Context(), apiActor, name, admin.Write{Patch: p.Patch, SoldOut: p.SoldOut})
	var invalid *admin.InvalidError
	switch {
	case errors.As(err, &invalid):
		response.WriteError(w, http.StatusBadRequest, "invalid_settings", invalid.Error())
		return
	case err != nil:
		s.fail(w, r, err)
		return
	}
	status := http.StatusOK
	var warnings []string
	if done.Created {
		status = http.StatusCreated
		warnings = s.leftoverWarnings(r.Context(), name)
	}
	if done.SoldOutErr != nil {
		warnings = append(warnings, soldOutUnset)
	}
	s.writeRoom(w, r, status, name, done.New, true, warnings...)
}

// deleteRoom removes a room, its line and all its Redis keys, and its
// record; its products and orders stay in the database.
func (s *Server) deleteRoom(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	d, err := s.roomWrites.Delete(r.Context(), apiActor, name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	response.WriteJSON(w, http.StatusOK, map[string]any{"room": name, "deleted": true, "redisKeys": d.Keys})
}

func (s *Server) getRoom(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	set, err := s.rooms.Room(r.Context(), name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeRoom(w, r, http.StatusOK, name, set, false)
}

// writeRoom answers with room name's settings set and its live figures.
// saved says that this request saved set: the answer is then the save's,
// whatever becomes of the live figures' read after it; a read that fails
// leaves "live" null and says why in "liveError", rather than answering
// an error for a change that was made.
func (s *Server) writeRoom(w http.ResponseWriter, r *http.Request, status int, name string, set room.Settings, saved bool, warnings ...string) {
	set.Challenge = s.effectiveChallenge(set.Challenge)
	v, err := s.liveRoom(r.Context(), name, set)
	switch {
	case err == nil:
	case !saved:
		s.fail(w, r, err)
		return
	default:
		s.log.Warn("admin: room saved, its live figures unread", "room", name, "err", err)
		v = roomView{Name: name, Settings: s.adminView(set), LiveError: liveUnread}
	}
	v.Warnings = warnings
	response.WriteJSON(w, status, v)
}

// soldOutUnset is the admin API's warning for a saved room whose asked-for
// sold-out flag could not be set.
const soldOutUnset = "The settings are saved; the sold-out flag could not be set just now. PUT soldOut again."

// liveUnread is the admin API's liveError of a saved room whose live
// figures could not be read.
const liveUnread = "The settings are saved; the live figures could not be read just now. GET the room to read them."

// liveRoom reads room name's live figures into its admin view with the
// settings set.
func (s *Server) liveRoom(ctx context.Context, name string, set room.Settings) (roomView, error) {
	st, err := s.rooms.Stats(ctx, name)
	if err != nil {
		return roomView{}, err
	}
	nets, err := s.nets.read(ctx, name)
	if err != nil {
		return roomView{}, err
	}
	v := roomView{Name: name, Settings: s.adminView(set), Live: &st, PrequeueNetworks: nets}
	if !set.Adaptive {
		return v, nil
	}
	ars, err := s.rooms.AdaptRooms(ctx, []string{name})
	if err != nil {
		return roomView{}, err
	}
	if ar, ok := ars[name]; ok {
		hist, err := s.rooms.AdaptHistory(ctx, name, adminHistoryLen)
		if err != nil {
			return roomView{}, err
		}
		v.Controller = &controllerView{Rate: ar.Rate, Reason: ar.LastReason, Decisions: ar.N, History: adaptChangeViews(hist)}
		if !ar.Last.IsZero() {
			at := ar.Last.UTC()
			v.Controller.At = &at
		}
	}
	return v, nil
}
