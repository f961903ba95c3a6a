package gatemode

import (
	"context"
	"errors"
	"net/http"
	"time"

	"waitingroom/server/queue"
)

// checkTimeout bounds /gate/check's one Redis round trip: nginx waits on
// it for every request of a protected page.
const checkTimeout = 2 * time.Second

// Check serves GET /gate/check, nginx's auth_request: 204 for a live
// wr_gate session (renewed in idle mode) of the room that
// X-Waitingroom-Room names or, without that header, of a room whose shop
// is on the request's Host; 401 for none. It reads no database and makes
// one Redis round trip (none without a session cookie). When Redis cannot
// be reached, or is known to be away (storeDown), the room answers as it
// chose, from the settings last read, for visitors with a cookie or
// without: 204 with X-Waitingroom-Fail: open, or 503.
func (gt *Gate) Check(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if gt.d.Gates == nil {
		gt.gateDenied(w)
		return
	}
	want := r.Header.Get("X-Waitingroom-Room")
	name, id, ok := gateSession(r)
	if ok && want != "" && want != name {
		ok = false // a session of another room
	}
	ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
	defer cancel()
	if ok && want == "" {
		// Without nginx naming the room, the session's room must be the
		// one whose shop this host is: a session of another shop's room
		// opens nothing here.
		host, err := gt.gateRoomHost(ctx, name)
		if err != nil {
			gt.storeDown.failed(time.Now())
			gt.gateUnreachable(w, name)
			return
		}
		ok = host == shopHost(r)
	}
	if !ok {
		gt.gateNoSession(w, r, want)
		return
	}
	_, err := gt.d.Gates.TouchSession(ctx, name, id, true)
	switch {
	case err == nil:
		gt.storeDown.ok(time.Now())
		gt.checks.allowed.Inc()
		if gt.rooms.claimRefresh(name, time.Now()) {
			gt.refreshGateRoom(name)
		}
		w.WriteHeader(http.StatusNoContent)
	case errors.Is(err, queue.ErrSessionGone):
		gt.storeDown.ok(time.Now())
		gt.gateDenied(w)
	default:
		gt.storeDown.failed(time.Now())
		gt.gateUnreachable(w, name)
	}
}

// gateNoSession answers a check without a session of the request's room:
// 401, or, while Redis is known to be away, the fail mode of the room
// that want names, else of the rooms whose shop is on the request's host
// (as the check with a cookie would answer).
func (gt *Gate) gateNoSession(w http.ResponseWriter, r *http.Request, want string) {
	if !gt.storeDown.down(time.Now()) {
		gt.gateDenied(w)
		return
	}
	names := gt.rooms.roomsOf(shopHost(r))
	if want != "" {
		names = []string{want}
	}
	if len(names) == 0 {
		gt.gateDenied(w)
		return
	}
	gt.gateUnreachable(w, names...)
}

// gateDenied answers a check without a live session of the room: 401.
func (gt *Gate) gateDenied(w http.ResponseWriter) {
	gt.checks.denied.Inc()
	w.WriteHeader(http.StatusUnauthorized)
}

// gateUnreachable answers a check that could not reach Redis as the rooms
// chose, from the settings last read: 204 with X-Waitingroom-Fail: open
// when every one of them fails open, else 503.
func (gt *Gate) gateUnreachable(w http.ResponseWriter, names ...string) {
	open := true
	for _, name := range names {
		open = open && gt.rooms.get(name)
	}
	if open {
		gt.checks.failOpen.Inc()
		w.Header().Set("X-Waitingroom-Fail", "open")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	gt.checks.failClosed.Inc()
	w.Header().Set("Retry-After", "2")
	w.WriteHeader(http.StatusServiceUnavailable)
}
