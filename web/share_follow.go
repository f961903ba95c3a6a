package web

import (
	"context"
	"errors"
	"net/http"
	"time"

	"waitingroom/server/share"
	"waitingroom/views"
)

// followTimeout bounds the lookup of a short link.
const followTimeout = 3 * time.Second

// followShare serves GET and HEAD /s/{code}: a 302 to the link's room
// with its UTM values. A GET counts a click (a HEAD does not); nothing is
// cached on the way, so that every click counts, and no cookie is set.
// An unknown code is a 404 page; a lookup that fails is a 503 page.
func (s *Server) followShare(w http.ResponseWriter, r *http.Request) {
	t := messages(r)
	code := r.PathValue("code")
	w.Header().Set("X-Robots-Tag", "noindex")
	gone := views.ErrorPage{Status: http.StatusNotFound, Heading: t.TitleNotFound, Message: t.ShareLinkGone}
	if s.shares == nil || !share.ValidCode(code) {
		s.htmlPage(w, r, gone)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), followTimeout)
	defer cancel()
	l, err := s.shares.Follow(ctx, code, r.Method == http.MethodGet)
	switch {
	case errors.Is(err, share.ErrNotFound):
		s.htmlPage(w, r, gone)
		return
	case err != nil:
		if !errors.Is(err, share.ErrBusy) && !errors.Is(err, context.DeadlineExceeded) {
			s.log.Warn("share: following a link failed", "code", code, "err", err)
		}
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusServiceUnavailable, Message: t.TroublePage, Retry: true})
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, l.Target(), http.StatusFound)
}
