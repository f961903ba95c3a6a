package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
	"waitingroom/web/request"

	"waitingroom/server/share"
	"waitingroom/views"
)

// followTimeout bounds the lookup of a short link.
const followTimeout = 3 * time.Second

// followShare serves GET and HEAD /s/{code}: a 302 to the link's room
// with its UTM values. A GET counts a click (a HEAD does not); nothing is
// cached on the way, so that every click counts, and no cookie is set.
// A link-preview crawler's GET is not a click (previewBot). The valid ad
// click ids and the utm_* values the link does not set are forwarded
// from the short link's own query (forwardedAttribution).
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
	l, err := s.shares.Follow(ctx, code, r.Method == http.MethodGet && !previewBot(r.UserAgent()))
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
	http.Redirect(w, r, l.TargetWith(forwardedAttribution(r.URL.Query())), http.StatusFound)
}

// forwardedAttribution is the attribution an ad platform appended to a
// short link (gclid, fbclid, ttclid and utm_*), its valid values only
// (request.ValidAttribution); the link's own UTM values win over these.
func forwardedAttribution(q url.Values) url.Values {
	out := url.Values{}
	for _, kv := range request.AttributionValues(request.AttributionOf(q)) {
		if kv[1] != "" {
			out.Set(kv[0], kv[1])
		}
	}
	return out
}

// previewBot reports whether ua is a link-preview crawler's or a search
// bot's (Naver's Yeti and Daum's crawler too): their GETs of a short link
// are not clicks, and their GET of a room's stream takes no place.
func previewBot(ua string) bool {
	bots := [...]string{"facebookexternalhit", "kakaotalk-scrap", "slackbot", "twitterbot", "linkedinbot",
		"telegrambot", "whatsapp", "discordbot", "googlebot", "bingbot", "yeti/", "daumoa", "applebot"}
	if len(ua) > 1024 {
		ua = ua[:1024]
	}
	ua = strings.ToLower(ua)
	for _, b := range bots {
		if strings.Contains(ua, b) {
			return true
		}
	}
	return false
}
