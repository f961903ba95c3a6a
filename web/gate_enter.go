package web

import (
	"context"
	"crypto/hmac"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"waitingroom/gate"
	"waitingroom/server/pass"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/views"
)

// The gate as served on the shop's host (nginx's auth_request, the
// reverse proxy): the callback that turns a pass into the wr_gate
// session cookie, and the check of that cookie.

// checkTimeout bounds /gate/check's one Redis round trip: nginx waits on
// it for every request of a protected page.
const checkTimeout = 2 * time.Second

// GateEnter is POST /_waitingroom/enter, for a listener that serves the
// shop's host (the reverse proxy).
func (s *Server) GateEnter() http.Handler { return http.HandlerFunc(s.gateEnter) }

// gateCookie is the wr_gate cookie of session id of room name. It has no
// Max-Age: the server decides how long the session lives.
// It is Secure when r came over TLS, or with X-Forwarded-Proto: https
// from a trusted proxy (TRUSTED_PROXIES).
func (s *Server) gateCookie(r *http.Request, name, id string) *http.Cookie {
	return &http.Cookie{Name: GateCookie, Value: name + "." + id, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: s.overTLS(r)}
}

// httpOrigin is o when it is an http(s) origin (scheme://host[:port],
// nothing more), else "".
func httpOrigin(o string) string {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return ""
	}
	return o
}

// gateSession returns the room and session id of r's wr_gate cookie; ok
// is false when there is none, or it is malformed.
func gateSession(r *http.Request) (name, id string, ok bool) {
	c, err := r.Cookie(GateCookie)
	if err != nil {
		return "", "", false
	}
	name, id, found := strings.Cut(c.Value, ".")
	if !found || !room.ValidName(name) || !validSessionID(id) {
		return "", "", false
	}
	return name, id, true
}

// gateEnter serves POST /_waitingroom/enter (fields pass and next): the
// pass is verified and redeemed here, the session cookie set, and the
// buyer sent on to next. A pass that cannot be used gets a page in the
// buyer's language that links back to the room.
func (s *Server) gateEnter(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	t := views.GateTextFor(messages(r).Lang)
	refuseWith := func(status int, name, issuer, heading, hint string) {
		p := views.ErrorPage{Status: status, Heading: heading, Message: hint, Room: name}
		if name != "" && issuer != "" {
			p.RoomURL = issuer + "/r/" + name
		}
		base := s.publicURL
		if base == "" {
			base = issuer
		}
		if status == http.StatusServiceUnavailable {
			// Retry posts the same pass again (the route takes POST only).
			p.Message = t.EnterTrouble
			p.RetryPost = &views.Repost{Action: enterPath, Fields: []views.Field{{Name: "pass", Value: r.PostForm.Get("pass")},
				{Name: "next", Value: gate.LocalPath(r.PostForm.Get("next"))}}}
		}
		s.htmlPageFrom(w, r, p, base)
	}
	refuse := func(status int, name, issuer string) {
		refuseWith(status, name, issuer, t.EnterRefused, t.EnterRefusedHint)
	}
	// stale answers a genuine-looking pass that can no longer be used (its
	// key rotated away, or a newer pass of the buyer replaced it): no
	// "not for this shop", the way back to the room.
	stale := func(name, issuer string) {
		refuseWith(http.StatusUnauthorized, name, issuer, t.EnterStale, t.EnterStaleHint)
	}
	if s.gates == nil || s.passKeys == nil {
		refuse(http.StatusNotFound, "", "")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, gateBodyMax)
	if err := r.ParseForm(); err != nil {
		refuse(formStatus(err), "", "")
		return
	}
	compact, next := r.PostForm.Get("pass"), gate.LocalPath(r.PostForm.Get("next"))
	c, err := s.passKeys.Verify(compact, time.Now())
	if errors.Is(err, pass.ErrUnknownKey) {
		// A key rotated away since the pass was signed (or a forgery):
		// the way back goes to the room it names, on this site only.
		if name := pass.UnverifiedRoom(compact); s.publicURL != "" && room.ValidName(name) {
			stale(name, s.publicURL)
			return
		}
		stale("", "")
		return
	}
	if err != nil || !room.ValidName(c.Room) {
		refuse(http.StatusUnauthorized, "", "")
		return
	}
	c.Issuer = httpOrigin(c.Issuer)
	if shopHost(r) != audienceHost(c.Audience) {
		// A pass opens a session on its own shop's host only: posted to
		// another shop guarded here, it would open a session of its room
		// there.
		refuse(http.StatusUnauthorized, c.Room, c.Issuer)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	set, err := s.rooms.Room(ctx, c.Room)
	switch {
	case errors.Is(err, room.ErrNotFound):
		refuse(http.StatusUnauthorized, "", "")
		return
	case err != nil:
		s.storeDown.failed(time.Now())
		s.enterUnavailable(w, r, c.Room, c.Issuer, next, s.gateRooms.get(c.Room), refuse)
		return
	}
	g := gateSettings(set)
	s.gateRooms.remember(c.Room, g, time.Now())
	// The session id is a keyed hash of a seed and the pass. The seed is
	// fresh, unless this browser holds the retry cookie that a failed
	// answer for this very pass set: then the resend gets the session its
	// first try may have opened, while any other browser gets another id
	// (told the pass was used). Nobody can plant a seed: the retry cookie
	// is MAC'd for this room and pass.
	seed, ok := s.retrySeed(r, c.Room, c.ID)
	if !ok {
		if seed, err = randomID(16); err != nil {
			refuse(http.StatusServiceUnavailable, c.Room, c.Issuer)
			return
		}
	}
	ss, err := s.redeemPassAs(ctx, c.Room, g, compact, s.sessionFor(c.Room, seed, c.ID))
	switch {
	case errors.Is(err, queue.ErrPassUnknown):
		stale(c.Room, c.Issuer) // replaced by a newer pass, or expired in the store
		return
	case errors.Is(err, errPassRefused):
		refuse(http.StatusUnauthorized, c.Room, c.Issuer)
		return
	case passUsed(err):
		if old := gateSessionOf(r, c.Room); old != "" {
			if _, err := s.gates.TouchSession(ctx, c.Room, old, false); err == nil {
				// A second submit of the form that already let this
				// browser in (a double click, the back button): on to
				// next, as the gate package does.
				http.Redirect(w, r, next, http.StatusSeeOther)
				return
			}
		}
		refuse(http.StatusConflict, c.Room, c.Issuer)
		return
	case err != nil:
		if !passBusy(err) {
			s.storeDown.failed(time.Now())
		}
		// The redeem may have been applied before the error (or the try
		// holding the pass may still succeed): the retry cookie makes a
		// resend of this pass land in the same session.
		http.SetCookie(w, s.retryCookie(r, c.Room, seed, c.ID))
		s.enterUnavailable(w, r, c.Room, c.Issuer, next, g.failOpen && !passBusy(err), refuse)
		return
	}
	if old := gateSessionOf(r, c.Room); old != "" && old != ss.ID {
		// A new pass replaces this browser's session of the room: one
		// browser holds one slot, so the old session ends now.
		if err := s.gates.EndSession(ctx, c.Room, old); err != nil {
			s.log.Warn("gate: the replaced session was not ended; it ends when idle", "room", c.Room, "err", err)
		}
	}
	s.storeDown.ok(time.Now())
	http.SetCookie(w, s.gateCookie(r, c.Room, ss.ID))
	if ok {
		http.SetCookie(w, &http.Cookie{Name: retryCookie, Path: enterPath, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: s.overTLS(r)})
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// retryCookie holds, after a failed answer of the enter, the seed of the
// session id that the resend of the same pass asks for, with its MAC.
const retryCookie = "wr_gate_retry"

// sessionFor is the session id that pass jti of room opens from seed: 22
// characters of a MAC under the server's secret, so that nobody can
// compute it from a seed and a pass they know.
func (s *Server) sessionFor(room, seed, jti string) string {
	return s.signer.MAC("gate session", room+"\x00"+seed+"\x00"+jti)[:22]
}

// retryTag is the MAC of the retry cookie: it binds seed to room and jti.
func (s *Server) retryTag(room, seed, jti string) string {
	return s.signer.MAC("gate retry", room+"\x00"+seed+"\x00"+jti)
}

// retryCookie returns the cookie that lets the resend of pass jti ask for
// the session id of seed: sent back only to the enter path, same-site,
// for ten minutes (a pass lives at most its room's token TTL).
func (s *Server) retryCookie(r *http.Request, room, seed, jti string) *http.Cookie {
	return &http.Cookie{Name: retryCookie, Value: seed + "." + s.retryTag(room, seed, jti), Path: enterPath, MaxAge: 600,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: s.overTLS(r)}
}

// retrySeed returns the seed of r's retry cookie when it was made for this
// room and pass; ok is false otherwise (none, forged, another pass).
func (s *Server) retrySeed(r *http.Request, room, jti string) (string, bool) {
	for _, c := range r.CookiesNamed(retryCookie) {
		seed, tag, found := strings.Cut(c.Value, ".")
		if found && validSessionID(seed) && hmac.Equal([]byte(tag), []byte(s.retryTag(room, seed, jti))) {
			return seed, true
		}
	}
	return "", false
}

// enterUnavailable answers a callback whose pass could not be redeemed
// because the waiting room's store is away: a room that fails open lets
// the buyer through to next (without a session: its checks fail open
// too), one that fails closed asks to retry.
func (s *Server) enterUnavailable(w http.ResponseWriter, r *http.Request, name, issuer, next string, failOpen bool, refuse func(int, string, string)) {
	s.log.Warn("gate: a pass could not be redeemed", "room", name, "failOpen", failOpen)
	if failOpen {
		s.metrics.GateChecks.WithLabelValues("fail_open").Inc()
		w.Header().Set("X-Waitingroom-Fail", "open")
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	refuse(http.StatusServiceUnavailable, name, issuer)
}

// gateCheck serves GET /gate/check, nginx's auth_request: 204 for a live
// wr_gate session (renewed in idle mode) of the room that
// X-Waitingroom-Room names or, without that header, of a room whose shop
// is on the request's Host; 401 for none. It reads no database and makes
// one Redis round trip (none without a session cookie). When Redis cannot
// be reached, or is known to be away (storeDown), the room answers as it
// chose, from the settings last read, for visitors with a cookie or
// without: 204 with X-Waitingroom-Fail: open, or 503.
func (s *Server) gateCheck(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if s.gates == nil {
		s.gateDenied(w)
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
		host, err := s.gateRoomHost(ctx, name)
		if err != nil {
			s.storeDown.failed(time.Now())
			s.gateUnreachable(w, name)
			return
		}
		ok = host == shopHost(r)
	}
	if !ok {
		s.gateNoSession(w, r, want)
		return
	}
	_, err := s.gates.TouchSession(ctx, name, id, true)
	switch {
	case err == nil:
		s.storeDown.ok(time.Now())
		s.metrics.GateChecks.WithLabelValues("allowed").Inc()
		if s.gateRooms.claimRefresh(name, time.Now()) {
			s.refreshGateRoom(name)
		}
		w.WriteHeader(http.StatusNoContent)
	case errors.Is(err, queue.ErrSessionGone):
		s.storeDown.ok(time.Now())
		s.gateDenied(w)
	default:
		s.storeDown.failed(time.Now())
		s.gateUnreachable(w, name)
	}
}

// gateNoSession answers a check without a session of the request's room:
// 401, or, while Redis is known to be away, the fail mode of the room
// that want names, else of the rooms whose shop is on the request's host
// (as the check with a cookie would answer).
func (s *Server) gateNoSession(w http.ResponseWriter, r *http.Request, want string) {
	if !s.storeDown.down(time.Now()) {
		s.gateDenied(w)
		return
	}
	names := s.gateRooms.roomsOf(shopHost(r))
	if want != "" {
		names = []string{want}
	}
	if len(names) == 0 {
		s.gateDenied(w)
		return
	}
	s.gateUnreachable(w, names...)
}

// gateDenied answers a check without a live session of the room: 401.
func (s *Server) gateDenied(w http.ResponseWriter) {
	s.metrics.GateChecks.WithLabelValues("denied").Inc()
	w.WriteHeader(http.StatusUnauthorized)
}

// gateUnreachable answers a check that could not reach Redis as the rooms
// chose, from the settings last read: 204 with X-Waitingroom-Fail: open
// when every one of them fails open, else 503.
func (s *Server) gateUnreachable(w http.ResponseWriter, names ...string) {
	open := true
	for _, name := range names {
		open = open && s.gateRooms.get(name)
	}
	if open {
		s.metrics.GateChecks.WithLabelValues("fail_open").Inc()
		w.Header().Set("X-Waitingroom-Fail", "open")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.metrics.GateChecks.WithLabelValues("fail_closed").Inc()
	w.Header().Set("Retry-After", "2")
	w.WriteHeader(http.StatusServiceUnavailable)
}
