package web

// STAND-IN until H1 (console sign-in, server/audit) lands on main: the names of the shared contract,
// with the least behaviour the dashboard's tests need. This file goes
// when they land.

import (
	"context"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"
	"time"

	"waitingroom/views"
)

type consoleSession struct {
	Operator string
	CSRF     string
}

func (s *Server) console(h func(http.ResponseWriter, *http.Request, consoleSession)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		given, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if s.admin == nil || !ok || subtle.ConstantTimeCompare(digest(given), s.admin) != 1 {
			http.Redirect(w, r, "/admin/signin?next="+url.QueryEscape(r.URL.Path), http.StatusSeeOther)
			return
		}
		h(w, r, consoleSession{Operator: "admin", CSRF: "x"})
	}
}

func (s *Server) consoleError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	htmlHeaders(w)
	w.WriteHeader(status)
	views.ConsoleLayout(views.ConsolePage{Title: msg, Lang: "en"}).Render(r.Context(), w)
}

type auditEntry struct {
	ID                                    int64
	At                                    time.Time
	Actor, Room, Action, Target, Old, New string
}

type auditFilter struct {
	Room   string
	Before int64
	Limit  int
}

var _ = context.Background
