package gatemode

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
	"waitingroom/web/request"
)

// The callback served on the shop's host (nginx, the reverse proxy) that
// turns a pass into the wr_gate session cookie; check.go checks that
// cookie.

// gateCookie is the wr_gate cookie of session id of room name. It has no
// Max-Age: the server decides how long the session lives.
// It is Secure when r came over TLS, or with X-Forwarded-Proto: https
// from a trusted proxy (TRUSTED_PROXIES).
func (gt *Gate) gateCookie(r *http.Request, name, id string) *http.Cookie {
	return &http.Cookie{Name: GateCookie, Value: name + "." + id, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: gt.overTLS(r)}
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
	if !found || !room.ValidName(name) || !ValidSessionID(id) {
		return "", "", false
	}
	return name, id, true
}

// Enter serves POST /_waitingroom/enter (fields pass and next): the
// pass is verified and redeemed here, the session cookie set, and the
// buyer sent on to next. A pass that cannot be used gets a page in the
// buyer's language that links back to the room.
func (gt *Gate) Enter(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	t := views.GateTextFor(gt.d.Text(r).Lang)
	refuseWith := func(status int, name, issuer, heading, hint string) {
		p := views.ErrorPage{Status: status, Heading: heading, Message: hint, Room: name}
		if name != "" && issuer != "" {
			p.RoomURL = issuer + "/r/" + name
		}
		base := gt.d.PublicURL
		if base == "" {
			base = issuer
		}
		if status == http.StatusServiceUnavailable {
			// Retry posts the same pass again (the route takes POST only).
			p.Message = t.EnterTrouble
			p.RetryPost = &views.Repost{Action: EnterPath, Fields: []views.Field{{Name: "pass", Value: r.PostForm.Get("pass")},
				{Name: "next", Value: gate.LocalPath(r.PostForm.Get("next"))}}}
		}
		gt.d.Page(w, r, p, base)
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
	if !gt.on() {
		refuse(http.StatusNotFound, "", "")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, BodyMax)
	if err := r.ParseForm(); err != nil {
		refuse(formStatus(err), "", "")
		return
	}
	compact, next := r.PostForm.Get("pass"), gate.LocalPath(r.PostForm.Get("next"))
	c, err := gt.d.PassKeys.Verify(compact, time.Now())
	if errors.Is(err, pass.ErrUnknownKey) {
		// A key rotated away since the pass was signed (or a forgery):
		// the way back goes to the room it names, on this site only.
		if name := pass.UnverifiedRoom(compact); gt.d.PublicURL != "" && room.ValidName(name) {
			stale(name, gt.d.PublicURL)
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
	set, err := gt.d.Rooms.Room(ctx, c.Room)
	switch {
	case errors.Is(err, room.ErrNotFound):
		refuse(http.StatusUnauthorized, "", "")
		return
	case err != nil:
		gt.storeDown.failed(time.Now())
		gt.enterUnavailable(w, r, c.Room, c.Issuer, next, gt.rooms.get(c.Room), refuse)
		return
	}
	g := gateSettings(set)
	gt.rooms.remember(c.Room, g, time.Now())
	// The session id is a keyed hash of a seed and the pass. The seed is
	// fresh, unless this browser holds the retry cookie that a failed
	// answer for this very pass set: then the resend gets the session its
	// first try may have opened, while any other browser gets another id
	// (told the pass was used). Nobody can plant a seed: the retry cookie
	// is MAC'd for this room and pass.
	seed, ok := gt.retrySeed(r, c.Room, c.ID)
	if !ok {
		if seed, err = randomID(16); err != nil {
			refuse(http.StatusServiceUnavailable, c.Room, c.Issuer)
			return
		}
	}
	ss, err := gt.redeemPassAs(ctx, c.Room, g, compact, gt.sessionFor(c.Room, seed, c.ID))
	switch {
	case errors.Is(err, queue.ErrPassUnknown):
		stale(c.Room, c.Issuer) // replaced by a newer pass, or expired in the store
		return
	case errors.Is(err, errPassRefused):
		refuse(http.StatusUnauthorized, c.Room, c.Issuer)
		return
	case passUsed(err):
		if old := gateSessionOf(r, c.Room); old != "" {
			if _, err := gt.d.Gates.TouchSession(ctx, c.Room, old, false); err == nil {
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
			gt.storeDown.failed(time.Now())
		}
		// The redeem may have been applied before the error (or the try
		// holding the pass may still succeed): the retry cookie makes a
		// resend of this pass land in the same session.
		http.SetCookie(w, gt.retryCookieFor(r, c.Room, seed, c.ID))
		gt.enterUnavailable(w, r, c.Room, c.Issuer, next, g.failOpen && !passBusy(err), refuse)
		return
	}
	if old := gateSessionOf(r, c.Room); old != "" && old != ss.ID {
		// A new pass replaces this browser's session of the room: one
		// browser holds one slot, so the old session ends now.
		if err := gt.d.Gates.EndSession(ctx, c.Room, old); err != nil {
			gt.d.Log.Warn("gate: the replaced session was not ended; it ends when idle", "room", c.Room, "err", err)
		}
	}
	gt.storeDown.ok(time.Now())
	http.SetCookie(w, gt.gateCookie(r, c.Room, ss.ID))
	if ok {
		http.SetCookie(w, &http.Cookie{Name: RetryCookie, Path: EnterPath, MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: gt.overTLS(r)})
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// RetryCookie holds, after a failed answer of the enter, the seed of the
// session id that the resend of the same pass asks for, with its MAC.
const RetryCookie = "wr_gate_retry"

// sessionFor is the session id that pass jti of room opens from seed: 22
// characters of a MAC under the server's secret, so that nobody can
// compute it from a seed and a pass they know.
func (gt *Gate) sessionFor(room, seed, jti string) string {
	return gt.d.Signer.MAC("gate session", room+"\x00"+seed+"\x00"+jti)[:22]
}

// retryTag is the MAC of the retry cookie: it binds seed to room and jti.
func (gt *Gate) retryTag(room, seed, jti string) string {
	return gt.d.Signer.MAC("gate retry", room+"\x00"+seed+"\x00"+jti)
}

// retryCookieFor returns the cookie that lets the resend of pass jti ask for
// the session id of seed: sent back only to the enter path, same-site,
// for ten minutes (a pass lives at most its room's token TTL).
func (gt *Gate) retryCookieFor(r *http.Request, room, seed, jti string) *http.Cookie {
	return &http.Cookie{Name: RetryCookie, Value: seed + "." + gt.retryTag(room, seed, jti), Path: EnterPath, MaxAge: 600,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: gt.overTLS(r)}
}

// retrySeed returns the seed of r's retry cookie when it was made for this
// room and pass; ok is false otherwise (none, forged, another pass).
func (gt *Gate) retrySeed(r *http.Request, room, jti string) (string, bool) {
	for _, c := range r.CookiesNamed(RetryCookie) {
		seed, tag, found := strings.Cut(c.Value, ".")
		if found && ValidSessionID(seed) && hmac.Equal([]byte(tag), []byte(gt.retryTag(room, seed, jti))) {
			return seed, true
		}
	}
	return "", false
}

// enterUnavailable answers a callback whose pass could not be redeemed
// because the waiting room's store is away: a room that fails open lets
// the buyer through to next (without a session: its checks fail open
// too), one that fails closed asks to retry.
func (gt *Gate) enterUnavailable(w http.ResponseWriter, r *http.Request, name, issuer, next string, failOpen bool, refuse func(int, string, string)) {
	gt.d.Log.Warn("gate: a pass could not be redeemed", "room", name, "failOpen", failOpen)
	if failOpen {
		gt.checks.failOpen.Inc()
		w.Header().Set("X-Waitingroom-Fail", "open")
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	refuse(http.StatusServiceUnavailable, name, issuer)
}

// formStatus is the status of a form body that did not parse: 413 when
// it was over its limit (http.MaxBytesReader), else 400, malformed.
func formStatus(err error) int {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// overTLS reports whether r came over TLS, to this server or to a trusted
// proxy that says so.
func (gt *Gate) overTLS(r *http.Request) bool { return request.OverTLS(r, gt.d.Trusted) }
