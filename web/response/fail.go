package response

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"waitingroom/views"
)

// Failer answers errors through the table. Its fields are the caller's:
// the log and the pages, which know the room's language, look and brand.
type Failer struct {
	// Log takes every error no row takes, as "request failed".
	Log *slog.Logger
	// Text is the buyer's messages for a page of room ("" for none), in
	// the visitor's language.
	Text func(r *http.Request, room string) views.Messages
	// Page answers the buyer's HTML error page p.
	Page func(w http.ResponseWriter, r *http.Request, p views.ErrorPage)
	// ConsoleLang is the operator's language.
	ConsoleLang func(r *http.Request) string
	// Console answers the console's error page with status and msg.
	Console func(w http.ResponseWriter, r *http.Request, status int, msg string)
}

// PageOptions are a buyer page's own parts of an error page.
type PageOptions struct {
	// Scope is the request's scope.
	Scope Scope
	// Room is the page's room, linked back to.
	Room string
	// Repost, when set, is the form a retry posts again.
	Repost *views.Repost
}

// Fail answers err as the request asks: JSON under /api/ or to a client
// that accepts JSON and not HTML, the console's page under /admin/, else
// the buyer's error page of the address's room.
func (f Failer) Fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case wantsJSON(r):
		f.JSON(w, r, ScopeAny, err)
	case strings.HasPrefix(r.URL.Path, "/admin/"):
		f.ConsolePage(w, r, err)
	default:
		f.HTML(w, r, err, PageOptions{Room: r.PathValue("room")})
	}
}

// wantsJSON reports whether r is the API's or asks for JSON alone.
func wantsJSON(r *http.Request) bool {
	if strings.HasPrefix(r.URL.Path, "/api/") {
		return true
	}
	a := r.Header.Get("Accept")
	return strings.Contains(a, "application/json") && !strings.Contains(a, "text/html")
}

// JSON answers err in the API's error shape, as scope's requests answer
// it.
func (f Failer) JSON(w http.ResponseWriter, r *http.Request, scope Scope, err error) {
	rule, known := lookup(Rules(), scope, err)
	if !known {
		f.logFailed(r, err)
	}
	e := Error{Code: rule.Code, Message: strings.ReplaceAll(rule.Message, "{room}", strconv.Quote(r.PathValue("room")))}
	if rule.Wait != nil {
		if d, ok := rule.Wait(err); ok {
			w.Header().Set("Retry-After", strconv.Itoa(RetrySeconds(d)))
		}
	}
	if rule.NoStore {
		w.Header().Set("Cache-Control", "no-store")
	}
	if rule.Body != nil {
		room := r.PathValue("room")
		WriteJSON(w, rule.Status, rule.Body(e, err, Detail{T: f.text(r, room), Room: room}))
		return
	}
	WriteError(w, rule.Status, e.Code, e.Message)
}

// HTML answers err as the buyer's error page, in the visitor's language.
func (f Failer) HTML(w http.ResponseWriter, r *http.Request, err error, o PageOptions) {
	rule, known := lookup(Rules(), o.Scope, err)
	if known && rule.Text == nil {
		rule, known = fallback(Rules(), o.Scope), false
	}
	if !known {
		f.logFailed(r, err)
	}
	t := f.text(r, o.Room)
	p := views.ErrorPage{Status: rule.status(true), Message: rule.Text(t, err), Room: o.Room, Rejoin: rule.Rejoin}
	if rule.Heading != nil {
		p.Heading = rule.Heading(t)
	}
	if rule.NoRoom {
		p.Room = ""
	}
	if si, ok := as[*SignIn](err); ok {
		p.SignInURL = si.URL
	}
	if rule.Wait != nil && !rule.WaitAPIOnly {
		if d, ok := rule.Wait(err); ok {
			w.Header().Set("Retry-After", strconv.Itoa(RetrySeconds(d)))
		}
	}
	switch {
	case rule.Retry == RetryAlways:
		p.Retry = true
	case rule.Retry == RetryRequest && o.Repost != nil:
		p.RetryPost = o.Repost
	case rule.Retry == RetryRequest:
		// A GET is asked again; a form posted (a hand-off, a join) goes
		// back to the room's page, which offers it again.
		p.Retry = r.Method == http.MethodGet || r.Method == http.MethodHead
	}
	f.Page(w, r, p)
}

// ConsolePage answers err as the console's error page, in the operator's
// language.
func (f Failer) ConsolePage(w http.ResponseWriter, r *http.Request, err error) {
	rule, known := lookup(Rules(), ScopeAny, err)
	if known && rule.Console == nil {
		rule, known = fallback(Rules(), ScopeAny), false
	}
	if !known {
		f.logFailed(r, err)
	}
	f.Console(w, r, rule.Status, rule.Console(f.ConsoleLang(r)))
}

func (f Failer) text(r *http.Request, room string) views.Messages {
	if f.Text == nil {
		return views.For(views.Negotiate(r.Header.Get("Accept-Language")))
	}
	return f.Text(r, room)
}

func (f Failer) logFailed(r *http.Request, err error) {
	if f.Log != nil {
		f.Log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
}
