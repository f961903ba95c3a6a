package web

import (
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"waitingroom/server/room"
	"waitingroom/views"
	"waitingroom/web/console"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

// newCrossOrigin returns the guard that keeps other sites from changing a
// buyer's state through the buyer's browser. Go's CrossOriginProtection
// refuses a POST, PUT or DELETE whose Sec-Fetch-Site is not same-origin,
// or, from a browser too old to send it, whose Origin is neither this host
// nor one of allowed. Safe methods and requests without either header (not from a
// browser) pass. A refused request reaches deny, and no handler: it can
// set no cookie.
func newCrossOrigin(allowed []string, deny http.Handler) (*http.CrossOriginProtection, error) {
	c := http.NewCrossOriginProtection()
	for _, o := range allowed {
		if err := c.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("web: allowed origin %q: %w", o, err)
		}
	}
	c.SetDenyHandler(deny)
	return c, nil
}

// refuseCrossSite answers a refused cross-site request: the JSON error on
// the API, an error page in the visitor's language on the forms.
func (s *Server) refuseCrossSite(w http.ResponseWriter, r *http.Request) {
	s.metrics.Rejected.WithLabelValues("cross_site").Inc()
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Path == "/admin" || strings.HasPrefix(r.URL.Path, "/admin/") {
		s.console.Error(w, r, http.StatusForbidden, views.ConsoleTextFor(console.Lang(r)).ErrBadCSRF)
		return
	}
	if strings.HasPrefix(r.URL.Path, "/api/") {
		response.WriteError(w, http.StatusForbidden, "cross_site", "Requests from another site cannot change anything here. Open the waiting room itself to continue.")
		return
	}
	name := roomOfPath(r.URL.Path)
	s.htmlError(w, r, http.StatusForbidden, s.roomText(r, name).ErrCrossSite, name, false)
}

// streamCrossSite reports a ticket stream requested by another site: one
// the cross-origin guard would refuse were it a POST (crossSite), or, from
// a browser too old to send Sec-Fetch-Site or Origin (an <img> sends no
// Origin), one whose Referer is of another host than this one and the
// allowed origins. A request with none of the three (no browser) passes.
func (s *Server) streamCrossSite(r *http.Request) bool {
	if s.crossSite(r) {
		return true
	}
	if r.Header.Get("Sec-Fetch-Site") != "" || r.Header.Get("Origin") != "" {
		return false
	}
	ref, err := url.Parse(r.Referer())
	if err != nil || ref.Host == "" {
		return false
	}
	p := r.WithContext(r.Context())
	p.Header = r.Header.Clone()
	p.Header.Set("Origin", ref.Scheme+"://"+ref.Host)
	return s.crossSite(p)
}

// refuseCrossStream answers another site's ticket stream of a visitor
// who has no place: 403 cross_site, which an EventSource does not retry.
func (s *Server) refuseCrossStream(w http.ResponseWriter) {
	s.metrics.Rejected.WithLabelValues("cross_site").Inc()
	w.Header().Set("Cache-Control", "no-store")
	response.WriteError(w, http.StatusForbidden, "cross_site", "Another site cannot put you in the line. Open the waiting room itself to take a place.")
}

// roomOfPath returns the room of a /r/{room}/… path, or "" when there is
// none: the router has not run yet when a request is refused.
func roomOfPath(p string) string {
	rest, ok := strings.CutPrefix(p, "/r/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	if !room.ValidName(name) {
		return ""
	}
	return name
}

// jsonBody enforces the JSON API's one body type on POST: application/json,
// or no body at all. A body of another type, such as a form another site
// posts, gets 415. It reports false after answering.
func jsonBody(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.ContentLength == 0 {
		return true
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && mt == "application/json" {
		return true
	}
	// Another type, or none: only an empty body (of unannounced length)
	// may pass.
	n, err := io.Copy(io.Discard, r.Body)
	switch {
	case err != nil:
		return request.BodyError(w, err)
	case n > 0:
		response.WriteError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "Send the body as Content-Type: application/json, or send no body.")
		return false
	}
	r.Body = http.NoBody
	return true
}
