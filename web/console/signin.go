package console

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"waitingroom/server/audit"
	"waitingroom/server/operator"
	"waitingroom/server/room"
	"waitingroom/views"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

// Operators are the console's accounts and sessions (server/operator).
type Operators interface {
	// Authenticate returns operator.ErrWrongPassword for a wrong name or
	// password, taking as long either way.
	Authenticate(ctx context.Context, name, password string) error
	// Has reports whether any operator account exists.
	Has(ctx context.Context) (bool, error)
	StartSession(ctx context.Context, operator string) (secret string, s operator.Session, err error)
	// Session returns operator.ErrNoSession for an unknown or expired
	// secret.
	Session(ctx context.Context, secret string) (operator.Session, error)
	EndSession(ctx context.Context, secret string) error
}

// Audit is the log of who changed what (server/audit).
type Audit interface {
	Record(ctx context.Context, e audit.Entry) error
	List(ctx context.Context, f audit.Filter) ([]audit.Entry, error)
}

// SessionCookie holds the console session's secret.
const SessionCookie = "wr_admin"

// FormBodyMax bounds a console form.
const FormBodyMax = 64 << 10

// RoomFormMax bounds the room settings form: its pasted identity keys may
// take room.MaxIdentityKeysLen bytes, up to three times that form-encoded
// (each newline, '+' and '/' as %XX), beside the other fields.
const RoomFormMax = 3*room.MaxIdentityKeysLen + FormBodyMax

// Session is the signed-in operator of a console request.
type Session struct {
	Operator string // operator name, or "admin" when signed in with ADMIN_TOKEN
	CSRF     string // the session's CSRF token; every form carries it as field "csrf"
}

type consoleSessionKey struct{}

// Lang picks the console's language from Accept-Language, as the
// buyer pages do.
func Lang(r *http.Request) string {
	return views.Negotiate(r.Header.Get("Accept-Language"))
}

// consoleText returns the console texts in the operator's language.
func consoleText(r *http.Request) views.ConsoleText { return views.ConsoleTextFor(Lang(r)) }

// consolePage returns the frame of a console page for sess.
func (s *Console) consolePage(r *http.Request, sess Session, title, nav string) views.ConsolePage {
	return views.ConsolePage{Title: title, Operator: sess.Operator, CSRF: sess.CSRF, Nav: nav,
		Lang: Lang(r), A: views.Assets{CSS: s.assetURL("console.css")}}
}

// session returns the request's live console session.
func (s *Console) session(r *http.Request) (Session, error) {
	if s.operators == nil {
		return Session{}, operator.ErrNoSession
	}
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return Session{}, operator.ErrNoSession
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	sess, err := s.operators.Session(ctx, c.Value)
	if err != nil {
		return Session{}, err
	}
	who := sess.Operator
	if who == "admin" || strings.HasPrefix(who, adminSessionPrefix) {
		// Opened with the admin token: it must be the token this server
		// has now (none, or another, ends the session). A bare "admin"
		// predates the token's fingerprint.
		if s.admin == nil || subtle.ConstantTimeCompare([]byte(who), []byte(s.adminSessionOperator())) != 1 {
			return Session{}, operator.ErrNoSession
		}
		who = "admin"
	}
	return Session{Operator: who, CSRF: sess.CSRF}, nil
}

// adminSessionPrefix starts the stored operator of an admin token's
// session; no operator's name has a ':'.
const adminSessionPrefix = "admin:"

// adminSessionOperator is what a session opened with the admin token
// stores as its operator: "admin:" and the first 8 hex digits of the
// SHA-256 of the token's digest. When ADMIN_TOKEN changes, so does it,
// and the sessions of the old token end. It tells nothing usable about a
// token of at least 32 bytes.
func (s *Console) adminSessionOperator() string {
	d := sha256.Sum256(s.admin)
	return adminSessionPrefix + hex.EncodeToString(d[:4])
}

// Handler is a console page or change, served to a signed-in operator.
type Handler func(http.ResponseWriter, *http.Request, Session)

// withSession returns r carrying sess, which Error's page shows.
func withSession(r *http.Request, sess Session) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), consoleSessionKey{}, sess))
}

// bounded runs h with r's context bounded by limit: the one bound of a
// console request's store work, which Page and the changes set.
func bounded(limit time.Duration, w http.ResponseWriter, r *http.Request, sess Session, h Handler) {
	ctx, cancel := context.WithTimeout(r.Context(), limit)
	defer cancel()
	h(w, r.WithContext(ctx), sess)
}

// Page wraps a GET page: no valid session → 303 /admin/signin?next=<path>.
// Its store work is bounded by requestTimeout.
func (s *Console) Page(h Handler) http.HandlerFunc { return s.PageFor(requestTimeout, h) }

// PageFor is Page for a page whose work takes up to limit: a stream, an
// export, or a page whose reads each have a budget of their own.
func (s *Console) PageFor(limit time.Duration, h Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		sess, err := s.session(r)
		switch {
		case errors.Is(err, operator.ErrNoSession):
			http.Redirect(w, r, "/admin/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		case err != nil:
			s.log.Error("console: session", "path", r.URL.Path, "err", err)
			s.Error(w, r, http.StatusServiceUnavailable, consoleText(r).ErrUnavailable)
			return
		}
		bounded(limit, w, withSession(r, sess), sess, h)
	}
}

// Change wraps a POST: valid session AND form field "csrf" equal
// (constant time) to the session's; otherwise a 403 console error page.
// It bounds the body (64 KiB).
func (s *Console) Change(h Handler) http.HandlerFunc {
	return s.ChangeUpTo(FormBodyMax, h, nil)
}

// ChangeUpTo is change for a form of at most limit bytes (a form with
// uploads). The session is checked before the body is read (it needs
// only the cookie): a request without one is read up to FormBodyMax
// only, so that no one can make the server read large forms without
// signing in. The CSRF token is in the body: it is checked after. A form
// over limit (or malformed) is answered by tooLarge, when set, rather
// than an error page; the form was not read then: tooLarge must change
// nothing (its CSRF token is unknown).
func (s *Console) ChangeUpTo(limit int64, h Handler, tooLarge http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		t := consoleText(r)
		sess, err := s.session(r)
		bound := limit
		if err != nil {
			bound = min(limit, FormBodyMax)
		}
		if !parseConsoleForm(w, r, bound) {
			if tooLarge != nil && err == nil {
				bounded(requestTimeout, w, r, sess, func(w http.ResponseWriter, r *http.Request, _ Session) { tooLarge(w, r) })
				return
			}
			s.Error(w, r, http.StatusRequestEntityTooLarge, t.ErrTooLarge)
			return
		}
		switch {
		case errors.Is(err, operator.ErrNoSession):
			s.Error(w, r, http.StatusForbidden, t.ErrBadCSRF)
			return
		case err != nil:
			s.log.Error("console: session", "path", r.URL.Path, "err", err)
			s.Error(w, r, http.StatusServiceUnavailable, t.ErrUnavailable)
			return
		}
		r = withSession(r, sess)
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(sess.CSRF)) != 1 {
			s.log.Warn("console: form without its CSRF token refused", "operator", sess.Operator, "path", r.URL.Path, "client", s.clientKey(r))
			s.Error(w, r, http.StatusForbidden, t.ErrBadCSRF)
			return
		}
		bounded(requestTimeout, w, r, sess, h)
	}
}

// parseConsoleForm reads a form of at most limit bytes into
// r.PostForm. It reports false when the body is too large or malformed.
func parseConsoleForm(w http.ResponseWriter, r *http.Request, limit int64) bool {
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	var err error
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		err = r.ParseMultipartForm(limit)
	} else {
		err = r.ParseForm()
	}
	if r.PostForm == nil {
		r.PostForm = url.Values{}
	}
	return err == nil
}

// Error renders a console error page (status, message in the operator's language).
func (s *Console) Error(w http.ResponseWriter, r *http.Request, status int, msg string) {
	sess, _ := r.Context().Value(consoleSessionKey{}).(Session)
	w.Header().Set("Cache-Control", "no-store")
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "2")
	}
	p := s.consolePage(r, sess, consoleText(r).StatusHeading(status), "")
	s.render(w, r, status, views.ConsoleError(p, status, msg))
}

// audit records one change; a failure is logged, never fails the request.
func (s *Console) audit(ctx context.Context, e audit.Entry) {
	if s.auditLog == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), requestTimeout)
	defer cancel()
	if err := s.auditLog.Record(ctx, e); err != nil {
		s.log.Error("console: audit", "action", e.Action, "room", e.Room, "err", err)
	}
}

// Home sends /admin to the rooms.
func (s *Console) Home(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/admin/rooms", http.StatusSeeOther)
}

// NotFound answers a console path that is not one, as a console
// page rather than the API's JSON.
func (s *Console) NotFound(w http.ResponseWriter, r *http.Request) {
	s.Error(w, r, http.StatusNotFound, consoleText(r).ErrNotFound)
}

// signinState says which ways of signing in are set up.
func (s *Console) signinState(r *http.Request, next string) views.ConsoleSignin {
	st := views.ConsoleSignin{Next: next, Token: s.admin != nil}
	if s.operators == nil {
		st.NoDB = true
		return st
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	has, err := s.operators.Has(ctx)
	if err != nil {
		s.log.Error("console: operators", "err", err)
		st.NoDB = true
		return st
	}
	st.Operators = has
	return st
}

// SigninPage shows the sign-in forms; to an operator already signed in,
// within the console's frame (to sign in as someone else, or out).
func (s *Console) SigninPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	t := consoleText(r)
	st := s.signinState(r, localNext(r.URL.Query().Get("next")))
	if r.URL.Query().Get("signedout") == "1" {
		st.Notice = t.SessionEnded
	}
	if sess, err := s.session(r); err == nil {
		r = r.WithContext(context.WithValue(r.Context(), consoleSessionKey{}, sess))
	}
	s.renderSignin(w, r, http.StatusOK, st)
}

func (s *Console) renderSignin(w http.ResponseWriter, r *http.Request, status int, st views.ConsoleSignin) {
	w.Header().Set("Cache-Control", "no-store")
	sess, _ := r.Context().Value(consoleSessionKey{}).(Session)
	p := s.consolePage(r, sess, consoleText(r).SignIn, "")
	s.render(w, r, status, views.ConsoleSigninPage(p, st))
}

// SigninHashes bounds the password checks running at once: each costs
// argon2id's memory (operator's parameters, 19 MiB), so that a burst of
// sign-ins cannot exhaust the server's memory. Untrusted attempts (without
// a device cookie for the account) may hold at most SigninUntrustedHashes
// of them: the rest are kept for the browsers operators signed in with
// before, so that a flood of guesses cannot keep them out.
const (
	SigninHashes          = 4
	SigninUntrustedHashes = 2
)

// deviceCookie names a browser that signed in to an operator's account
// (operator.Devices); only the sign-in sees it.
const (
	deviceCookie = "wr_device"
	devicePath   = "/admin/signin"
)

// Signin signs an operator in with a name and password, or with the
// admin token. A password attempt from a browser with a device cookie
// for the account (trusted) is counted against that cookie alone;
// any other is counted against its client network (with the admin
// API's failures, and in the network's lockout) and against the account
// (signin_guard.go), before its password is hashed, and taken back when
// it succeeds, so that a parallel burst gets no more tries than a
// sequence. Password checks beyond their share at once are refused at
// once. Failures are logged without what was typed.
func (s *Console) Signin(w http.ResponseWriter, r *http.Request) {
	t := consoleText(r)
	if !parseConsoleForm(w, r, FormBodyMax) {
		s.Error(w, r, http.StatusRequestEntityTooLarge, t.ErrTooLarge)
		return
	}
	next := localNext(r.PostForm.Get("next"))
	st := s.signinState(r, next)
	if st.NoDB {
		s.renderSignin(w, r, http.StatusServiceUnavailable, st)
		return
	}
	client, at := s.clientKey(r), s.signins.now()
	token, name := r.PostForm.Get("token"), r.PostForm.Get("name")
	device, trusted := "", false
	if token == "" && st.Operators {
		device, trusted = s.trustedDevice(r, name, at)
	}
	var undo []func()
	forgive := func() {
		for _, f := range undo {
			f()
		}
	}
	refuse := func(wait time.Duration, msg string) {
		forgive()
		s.rejected("admin_auth")
		w.Header().Set("Retry-After", strconv.Itoa(response.RetrySeconds(wait)))
		st.Error = msg
		if operator.ValidName(name) {
			st.Name = name
		}
		s.renderSignin(w, r, http.StatusTooManyRequests, st)
	}
	if trusted {
		wait, tk := s.signins.device.attempt(device, at)
		if wait > 0 {
			trusted = false // a cookie that failed too often is no longer trusted
		} else {
			undo = append(undo, func() { s.signins.device.forgive(tk) })
		}
	}
	if !trusted {
		if wait := s.adminFails.Attempt(client, at); wait > 0 {
			refuse(wait, views.Fill(t.TooManyFailures, "s", strconv.Itoa(response.RetrySeconds(wait))))
			return
		}
		undo = append(undo, func() { s.adminFails.Forgive(client, at) })
	}
	if !trusted && token == "" && st.Operators {
		wait, netTk := s.signins.networks.attempt(client, at)
		if wait > 0 {
			s.log.Warn("console sign-in refused: network locked out", "client", client)
			refuse(wait, views.Fill(t.TooManyFailures, "s", strconv.Itoa(response.RetrySeconds(wait))))
			return
		}
		undo = append(undo, func() { s.signins.networks.forgive(netTk) })
		wait, accTk := s.signins.accounts.attempt(accountKey(name), at)
		if wait > 0 {
			s.log.Warn("console sign-in refused: account locked out", "client", client)
			refuse(wait, views.Fill(t.AccountLocked, "m", strconv.Itoa(int(math.Ceil(wait.Minutes())))))
			return
		}
		undo = append(undo, func() { s.signins.accounts.forgive(accTk) })
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	who, method := "", "password"
	if token != "" {
		method = "token"
		if s.admin != nil && subtle.ConstantTimeCompare(digest(token), s.admin) == 1 {
			who = "admin"
		}
	} else {
		// Without any account no name can be right: nothing to hash. With
		// accounts, an unknown name is checked against a dummy hash, as
		// long as a known one.
		if st.Operators {
			checked, err := s.checkPassword(ctx, name, r.PostForm.Get("password"), trusted)
			switch {
			case !checked:
				forgive()
				s.rejected("signin_busy")
				s.log.Warn("console sign-in refused: password checks busy", "client", client, "trusted", trusted)
				w.Header().Set("Retry-After", "1")
				s.Error(w, r, http.StatusTooManyRequests, t.SignInBusy)
				return
			case err == nil:
				who = name
			case !errors.Is(err, operator.ErrWrongPassword):
				forgive()
				s.log.Error("console: sign-in", "err", err)
				s.renderSignin(w, r, http.StatusServiceUnavailable, views.ConsoleSignin{NoDB: true})
				return
			}
		}
		if operator.ValidName(name) {
			st.Name = name
		}
	}
	if who == "" {
		s.log.Warn("console sign-in failed", "client", client, "method", method, "trusted", trusted)
		st.Error = t.WrongSignIn
		s.renderSignin(w, r, http.StatusUnauthorized, st)
		return
	}
	stored := who
	if who == "admin" {
		stored = s.adminSessionOperator()
	}
	secret, _, err := s.operators.StartSession(ctx, stored)
	if err != nil {
		forgive()
		s.log.Error("console: start session", "err", err)
		s.renderSignin(w, r, http.StatusServiceUnavailable, views.ConsoleSignin{NoDB: true})
		return
	}
	if !trusted {
		s.adminFails.Forgive(client, at)
	}
	if method == "password" {
		s.signins.networks.clear(client)
		if trusted {
			s.signins.device.clear(device)
		} else {
			s.signins.accounts.clear(accountKey(who))
		}
		http.SetCookie(w, s.deviceCookie(r, s.devices.Issue(who, at), int(operator.DeviceTTL.Seconds())))
	}
	http.SetCookie(w, s.sessionCookie(r, secret, int(operator.SessionTTL.Seconds())))
	s.audit(r.Context(), audit.Entry{Actor: who, Action: "operator.signin", New: method})
	s.log.Info("console sign-in", "operator", who, "method", method, "client", client, "trusted", trusted)
	if next == "" {
		next = "/admin/rooms"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// trustedDevice returns the id of the request's device cookie when it is
// valid for the operator name.
func (s *Console) trustedDevice(r *http.Request, name string, now time.Time) (id string, ok bool) {
	c, err := r.Cookie(deviceCookie)
	if err != nil {
		return "", false
	}
	return s.devices.Verify(c.Value, name, now)
}

// checkPassword authenticates name and password when a password-check
// slot is free (for an untrusted attempt, one of its share); checked is
// false when it did not.
func (s *Console) checkPassword(ctx context.Context, name, password string, trusted bool) (checked bool, err error) {
	if !trusted {
		select {
		case s.untrustedHashing <- struct{}{}:
		default:
			return false, nil
		}
		defer func() { <-s.untrustedHashing }()
	}
	select {
	case s.hashing <- struct{}{}:
	default:
		return false, nil
	}
	defer func() { <-s.hashing }()
	return true, s.operators.Authenticate(ctx, name, password)
}

// signout ends the session.
func (s *Console) signout(w http.ResponseWriter, r *http.Request, sess Session) {
	if c, err := r.Cookie(SessionCookie); err == nil {
		if err := s.operators.EndSession(r.Context(), c.Value); err != nil {
			s.log.Error("console: end session", "err", err)
			s.Error(w, r, http.StatusServiceUnavailable, consoleText(r).ErrUnavailable)
			return
		}
	}
	http.SetCookie(w, s.sessionCookie(r, "", -1))
	s.log.Info("console sign-out", "operator", sess.Operator)
	http.Redirect(w, r, "/admin/signin?signedout=1", http.StatusSeeOther)
}

// deviceCookie is the wr_device cookie: only the sign-in sees it, no
// script reads it, no other site sends it.
func (s *Console) deviceCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name:     deviceCookie,
		Value:    value,
		Path:     devicePath,
		MaxAge:   maxAge,
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   request.OverTLS(r, s.trusted),
	}
}

// sessionCookie is the wr_admin cookie: only the console's paths see it,
// no script reads it, no other site sends it. maxAge < 0 deletes it.
func (s *Console) sessionCookie(r *http.Request, secret string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name:     SessionCookie,
		Value:    secret,
		Path:     "/admin",
		MaxAge:   maxAge,
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   request.OverTLS(r, s.trusted),
	}
}

// localNext returns next when it is a path of the console on this
// server, "" otherwise: a sign-in never sends anyone elsewhere.
func localNext(next string) string {
	if len(next) > 1024 || !strings.HasPrefix(next, "/admin/") || strings.ContainsAny(next, "\\\x00\r\n\t") {
		return ""
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || strings.Contains(u.Path, "..") || !strings.HasPrefix(u.Path, "/admin/") {
		return ""
	}
	return next
}
