package gatemode

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"waitingroom/server/pass"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

// The gate's JSON endpoints: the JWKS that shops verify passes with, a
// room's public gate settings, and the server-to-server redeem, renew and
// end that a shop calls with the room's API key.

// JWKS serves GET /.well-known/jwks.json: the current and the previous
// public pass keys.
func (gt *Gate) JWKS(w http.ResponseWriter, r *http.Request) {
	if gt.d.PassKeys == nil {
		gt.d.Fail(w, r, pass.ErrOff)
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(gt.d.PassKeys.JWKS())
}

// GateView is GET /api/rooms/{room}/gate's answer.
type GateView struct {
	Room           string `json:"room"`
	RoomURL        string `json:"roomURL"`
	FailOpen       bool   `json:"failOpen"`
	SessionSeconds int    `json:"sessionSeconds"`
	SessionMode    string `json:"sessionMode"`
	Audience       string `json:"audience"`
}

// Info serves GET /api/rooms/{room}/gate: what a shop's middleware
// needs of the room.
func (gt *Gate) Info(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	set, err := gt.d.Rooms.Room(r.Context(), name)
	if err != nil {
		gt.d.Fail(w, r, err)
		return
	}
	g := gateSettings(set)
	gt.rooms.remember(name, g, time.Now())
	if !g.on || !gt.on() {
		gt.d.Fail(w, r, room.ErrNoShop)
		return
	}
	origin := gt.d.Origin(r)
	response.WriteJSON(w, http.StatusOK, GateView{Room: name, RoomURL: origin + "/r/" + name, FailOpen: g.failOpen,
		SessionSeconds: g.sessionSeconds, SessionMode: g.sessionMode, Audience: g.audience})
}

// SessionView is a session as the gate's API answers it.
type SessionView struct {
	ID          string `json:"id"`
	Room        string `json:"room"`
	Subject     string `json:"subject"`
	ExpiresAt   string `json:"expiresAt"`
	Mode        string `json:"mode"`
	IdleSeconds int    `json:"idleSeconds"`
}

func viewSession(ss queue.Session) map[string]SessionView {
	return map[string]SessionView{"session": {ID: ss.ID, Room: ss.Room, Subject: ss.Subject,
		ExpiresAt: ss.Expires.UTC().Format(time.RFC3339), Mode: ss.Mode, IdleSeconds: ss.IdleSeconds}}
}

// RoomKeyOnly lets through requests bearing room {room}'s API key
// (Authorization: Bearer), compared in constant time through its SHA-256
// with the room's Gate.APIKeyHash. The key is checked first: the right
// key is never refused. Wrong keys are counted per client and room, and
// throttled as the admin token's are (with a count of their own); the key
// is never logged.
func (gt *Gate) RoomKeyOnly(next func(w http.ResponseWriter, r *http.Request, set room.Settings)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !gt.on() {
			gt.d.Fail(w, r, pass.ErrOff)
			return
		}
		name := r.PathValue("room")
		set, err := gt.d.Rooms.Room(r.Context(), name)
		if err != nil {
			gt.d.Fail(w, r, err)
			return
		}
		given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok && APIKeyMatches(given, set.Gate.APIKeyHash) {
			next(w, r, set)
			return
		}
		client := gt.d.Client(r)
		if gt.d.KeyFails.Refuse(w, client+" "+name, "api_key", "Too many failed API key authentications from your network. Retry later.") {
			return
		}
		gt.d.KeyFails.Fail(client + " " + name)
		gt.d.Rejected.WithLabelValues("api_key").Inc()
		gt.d.Log.Warn("room API key authentication failed", "room", name, "client", client, "path", r.URL.Path)
		w.Header().Set("WWW-Authenticate", `Bearer realm="waitingroom-room"`)
		response.WriteError(w, http.StatusUnauthorized, "api_key_invalid", "A valid API key of this room is required (Authorization: Bearer wrk_…).")
	}
}

// APIKeyMatches reports whether key's SHA-256 is hash (hex), in constant
// time; a room without a key matches nothing.
func APIKeyMatches(key, hash string) bool {
	want, err := hex.DecodeString(hash)
	if err != nil || len(want) != 32 {
		return false
	}
	sum := sha256.Sum256([]byte(key))
	return subtle.ConstantTimeCompare(sum[:], want) == 1
}

// errPassRefused is a pass that does not verify, or is not for this room
// and shop.
var errPassRefused = fmt.Errorf("pass refused: %w", pass.ErrInvalid)

// redeemPassAs verifies compact (signature, expiry, room name, audience
// the room's shop) and turns it into a session on the id sid chosen by the
// caller ("" for a fresh one): a retry with the same sid gets the same
// session. It returns errPassRefused, queue.ErrPassUnknown,
// queue.ErrTokenUsed, a *queue.WaitError or a store error.
func (gt *Gate) redeemPassAs(ctx context.Context, name string, g gateOf, compact, sid string) (queue.Session, error) {
	c, err := gt.d.PassKeys.Verify(compact, time.Now())
	if err != nil || !g.on || c.Room != name || subtle.ConstantTimeCompare([]byte(c.Audience), []byte(g.audience)) != 1 {
		return queue.Session{}, errPassRefused
	}
	if sid == "" {
		if sid, err = randomID(16); err != nil {
			return queue.Session{}, err
		}
	}
	return gt.d.Gates.Redeem(ctx, name, c.ID, sid)
}

// passUsed reports whether err of a redeem means that the pass was
// already used (or is being used right now).
func passUsed(err error) bool {
	return errors.Is(err, queue.ErrTokenUsed)
}

// passBusy reports whether err of a redeem means that another attempt
// holds the pass right now (a stalled first try, say): worth a retry, not
// a refusal, as that attempt may fail and leave the pass usable.
func passBusy(err error) bool {
	var wait *queue.WaitError
	return errors.As(err, &wait) || errors.Is(err, queue.ErrTokenInUse)
}

// Redeem serves POST /api/rooms/{room}/passes/redeem.
func (gt *Gate) Redeem(w http.ResponseWriter, r *http.Request, set room.Settings) {
	var body struct {
		Pass string `json:"pass"`
		// Session is the caller's session id (22 base64url characters),
		// optional: a retry with the same one is idempotent.
		Session string `json:"session"`
	}
	if !request.DecodeStrict(w, r, &body, `{"pass":"<the pass>","session":"<optional session id>"}`) {
		return
	}
	if body.Session != "" && !ValidSessionID(body.Session) {
		response.WriteError(w, http.StatusBadRequest, "bad_request", "session must be 22 base64url characters (16 random bytes), or absent.")
		return
	}
	name := r.PathValue("room")
	g := gateSettings(set)
	if !g.on {
		gt.d.Fail(w, r, room.ErrNoShop)
		return
	}
	ss, err := gt.redeemPassAs(r.Context(), name, g, body.Pass, body.Session)
	if err != nil && !errors.Is(err, errPassRefused) && !errors.Is(err, queue.ErrPassUnknown) && !passUsed(err) && !passBusy(err) {
		gt.storeDown.failed(time.Now())
	} else {
		gt.storeDown.ok(time.Now())
	}
	if err != nil {
		gt.d.Fail(w, r, err)
		return
	}
	response.WriteJSON(w, http.StatusOK, viewSession(ss))
}

// RenewSession serves POST /api/rooms/{room}/sessions/{id}/renew: the
// session's state, its expiry pushed on in idle mode.
func (gt *Gate) RenewSession(w http.ResponseWriter, r *http.Request, _ room.Settings) {
	name, id := r.PathValue("room"), r.PathValue("id")
	if !ValidSessionID(id) {
		response.WriteError(w, http.StatusNotFound, "session_gone", "There is no such live session.")
		return
	}
	ss, err := gt.d.Gates.TouchSession(r.Context(), name, id, true)
	if err != nil {
		gt.d.Fail(w, r, err)
		return
	}
	response.WriteJSON(w, http.StatusOK, viewSession(ss))
}

// EndSession serves POST /api/rooms/{room}/sessions/{id}/end: the session
// ends now and frees its slot; a gone one is no error.
func (gt *Gate) EndSession(w http.ResponseWriter, r *http.Request, _ room.Settings) {
	name, id := r.PathValue("room"), r.PathValue("id")
	if ValidSessionID(id) {
		if err := gt.d.Gates.EndSession(r.Context(), name, id); err != nil {
			gt.d.Fail(w, r, err)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
