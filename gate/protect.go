package gate

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// Protect wraps next so that it is served only to visitors with a live
// session of the room, and serves POST EnterPath (the room's hand-off).
//
//   - A valid wr_gate cookie: the session is renewed at waitingroom at most
//     once per RenewEvery, then next serves the request, timed: the time
//     to its answer's headers and whether it failed (5xx) go to the room
//     in the next second's report (report.go; Options.NoReport).
//   - No session (a cookie whose MAC does not verify is none), a session
//     waitingroom reports gone, or an unknown session while every call
//     slot is taken: GET and HEAD are sent to the room (303), other
//     methods get 403.
//   - Waitingroom is down (as the background probe found): next serves the
//     request when failing open, else a 503 "please retry" page.
//   - A call that waitingroom refused (401, 404, 429, a malformed answer),
//     or that failed while the probe has not found waitingroom down: a 503
//     "please retry" page for this request; never through.
func (g *Gate) Protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.refreshConfig()
		if r.URL.Path == EnterPath {
			g.serveEnter(w, r)
			return
		}
		id, ok := g.sessionID(r)
		if !ok {
			g.noSession(w, r, next)
			return
		}
		info, err := g.checkSession(r.Context(), id)
		switch {
		case err == nil:
			g.serveTimed(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, info)), next)
		case errors.Is(err, errSessionGone):
			g.clearCookie(w, r)
			g.noSession(w, r, next)
		case errors.Is(err, errBusy):
			g.noSession(w, r, next) // the cookie stays: the session may well be live
		default:
			g.failed(w, r, next, err, nil)
		}
	})
}

// EnterHandler serves only POST EnterPath, for a shop that routes that
// path apart from its protected pages (Protect serves it too).
func (g *Gate) EnterHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.refreshConfig()
		g.serveEnter(w, r)
	})
}

// noSession answers a visitor without a live session: to the room, or the
// fail mode when the probe found waitingroom down.
func (g *Gate) noSession(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if g.health.isDown() {
		g.fail(w, r, next, errUnavailable, nil)
		return
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, g.roomPage, http.StatusSeeOther)
		return
	}
	g.page(w, r, http.StatusForbidden, pageRequired, nil)
}

// maxEnterBody bounds the enter form.
const maxEnterBody = 16 << 10

// serveEnter takes a pass posted by the room: verify offline, redeem, set
// the cookie, 303 to next. It never logs the pass.
func (g *Gate) serveEnter(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxEnterBody)
	if err := r.ParseForm(); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
			return
		}
		g.page(w, r, http.StatusBadRequest, pageInvalid, nil)
		return
	}
	pass := r.PostForm.Get("pass")
	next := LocalPath(r.PostForm.Get("next"))
	ctx := r.Context()
	retry := &repost{Action: EnterPath, Pass: pass, Next: next}
	// The session id is chosen before the redeem, from a seed and the
	// pass; the retry page sets a cookie with the seed, MAC'd for this
	// pass: a resend of this form from the retry page (say after a
	// timeout whose redeem went through) asks for the same id, and
	// waitingroom answers it with that session. Refusals (used, expired,
	// invalid) set no cookie: they are not to be resent.
	var seed string
	var resent bool
	c, err := g.verify(ctx, pass)
	if err == nil {
		seed, resent = g.enterSeed(r, c.ID)
		var s session
		if s, err = g.redeem(ctx, pass, g.sessionFor(seed, c.ID)); err == nil {
			g.live.remember(s.ID, s.public(), true, g.freshUntil(g.now(), s), g.now())
			if old, ok := g.sessionID(r); ok && old != s.ID {
				// A new pass replaces this browser's session: free the old slot.
				g.endSession(ctx, old)
			}
			g.setCookie(w, r, s.ID)
			if resent {
				g.setRetryCookie(w, r, "", "", -1)
			}
			g.log.Info("gate: pass redeemed", "subject", s.Subject)
			w.Header().Set("Referrer-Policy", "no-referrer")
			w.Header().Set("Cache-Control", "no-store")
			http.Redirect(w, r, next, http.StatusSeeOther)
			return
		}
	}
	g.log.Debug("gate: pass refused", "err", err)
	switch {
	case errors.Is(err, errPassUsed):
		if id, ok := g.sessionID(r); ok {
			if _, err := g.checkSession(ctx, id); err == nil {
				// A second submit of the form that already let this
				// browser in: on to next.
				http.Redirect(w, r, next, http.StatusSeeOther)
				return
			}
		}
		g.page(w, r, http.StatusConflict, pageUsed, nil)
	case errors.Is(err, errPassExpired):
		g.page(w, r, http.StatusForbidden, pageExpired, nil)
	case errors.Is(err, errPassStale):
		g.page(w, r, http.StatusForbidden, pageStale, nil)
	case errors.Is(err, errKeyNotYet), errors.Is(err, errBusy), errors.Is(err, errRefused):
		if !errors.Is(err, errKeyNotYet) && g.health.reqLog.allow(g.now()) {
			g.log.Warn("gate: enter failed closed", "err", err)
		}
		if seed != "" {
			g.setRetryCookie(w, r, seed, c.ID, retryCookieAge) // for the resend: see seed
		}
		g.page(w, r, http.StatusServiceUnavailable, pageRetry, retry)
	case errors.Is(err, errUnavailable):
		// A timeout may hide a redeem that went through: the resend from
		// the retry page asks for the same session id (see seed). Once the
		// probe found waitingroom down and failing open, the buyer goes on
		// to next without a session.
		if seed != "" {
			g.setRetryCookie(w, r, seed, c.ID, retryCookieAge)
		}
		g.failed(w, r, http.RedirectHandler(next, http.StatusSeeOther), err, retry)
	default:
		g.page(w, r, http.StatusForbidden, pageInvalid, nil)
	}
}

// retryCookieAge is how long a retry cookie lasts (seconds): longer than
// a pass lives in most rooms.
const retryCookieAge = 600

// LocalPath returns next, path-cleaned, when it is a path on this host,
// else "/": one leading "/" (not "//"), no backslash and no control
// character anywhere, and still so after path.Clean (http.Redirect cleans
// the path again; "/./\evil" would become "/\evil", which browsers read
// as "//evil").
func LocalPath(next string) string {
	if next == "" || next[0] != '/' || len(next) > 2048 || strings.HasPrefix(next, "//") {
		return "/"
	}
	for i := 0; i < len(next); i++ {
		if c := next[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return "/"
	}
	p, rest := next, ""
	if i := strings.IndexAny(next, "?#"); i >= 0 {
		p, rest = next[:i], next[i:]
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && !strings.HasSuffix(clean, "/") {
		clean += "/"
	}
	if !strings.HasPrefix(clean, "/") || strings.HasPrefix(clean, "//") {
		return "/"
	}
	return clean + rest
}

// End ends the visitor's session at waitingroom (its slot goes back to the
// room at once) and clears the cookie. Call it when the buyer is done, for
// example after the order. A visitor without a session is not an error; the
// cookie is cleared even when waitingroom cannot be reached.
func (g *Gate) End(w http.ResponseWriter, r *http.Request) error {
	id, ok := g.sessionID(r)
	g.clearCookie(w, r)
	if !ok {
		return nil
	}
	return g.endSession(r.Context(), id)
}

// endSession ends id at waitingroom and remembers it gone.
func (g *Gate) endSession(ctx context.Context, id string) error {
	now := g.now()
	g.live.remember(id, Session{}, false, now.Add(g.opts.RenewEvery), now)
	err := g.end(ctx, id)
	if err != nil {
		g.log.Warn("gate: end session", "err", err)
	}
	return err
}

// Session is what the gate knows of the visitor's session. Protect puts it
// in the request's context for next; see SessionFrom.
type Session struct {
	Room      string    // the room's name
	Subject   string    // a hash of the visitor, as in the pass (the same buyer has the same subject)
	ExpiresAt time.Time // when the session ends unless renewed, as of its last renew
	Mode      string    // "idle" (renewed on activity) or "fixed"
}

// sessionKey is the context key of Session.
type sessionKey struct{}

// SessionFrom returns the session of a request that Protect let through.
// It reports false when the request came through because the gate failed
// open.
func SessionFrom(ctx context.Context) (Session, bool) {
	s, ok := ctx.Value(sessionKey{}).(Session)
	return s, ok
}
