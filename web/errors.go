package web

import (
	"net/http"
	"strings"

	"waitingroom/views"
	"waitingroom/web/console"
	"waitingroom/web/response"
)

// respond is the server's Failer: errors answered through the table, in
// the room's language and on the room's pages.
func (s *Server) respond() response.Failer {
	return response.Failer{Log: s.log, Text: s.roomText, Page: s.htmlPage, ConsoleLang: console.Lang, Console: s.console.Error}
}

// fail answers an engine error in the API's error shape.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.respond().JSON(w, r, response.ScopeAny, err)
}

// statusCatcher turns the mux's plain-text 404 and 405 answers into JSON,
// or its 404 into notFound's answer when set.
type statusCatcher struct {
	http.ResponseWriter
	caught   bool
	notFound func(http.ResponseWriter)
}

func (c *statusCatcher) WriteHeader(code int) {
	switch {
	case code == http.StatusNotFound && c.notFound != nil:
		c.caught = true
		c.notFound(c.ResponseWriter)
	case code == http.StatusNotFound:
		c.caught = true
		response.WriteError(c.ResponseWriter, code, "not_found", "No such endpoint.")
	case code == http.StatusMethodNotAllowed:
		c.caught = true
		response.WriteError(c.ResponseWriter, code, "method_not_allowed", "This endpoint does not take that method.")
	default:
		c.ResponseWriter.WriteHeader(code)
	}
}

func (c *statusCatcher) Write(b []byte) (int, error) {
	if c.caught {
		return len(b), nil
	}
	return c.ResponseWriter.Write(b)
}

// fallbacks answers what no route of mux takes (mux holds the routes
// alone; Handler routes only such requests here): under /api/, the mux's
// 404 and 405 as JSON; a GET or HEAD of /s/{code}/ or /r/{room}/ (a
// trailing slash) a 301 to the path without it, query kept; any other
// unknown path the HTML 404 page in the visitor's language (a known path
// with another method stays a JSON 405). The mux's own redirects (a
// subtree's path without its slash) are served as the mux serves them.
func (s *Server) fallbacks(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		switch {
		case pattern != "":
			mux.ServeHTTP(w, r)
		case strings.HasPrefix(r.URL.Path, "/api/"):
			h.ServeHTTP(&statusCatcher{ResponseWriter: w}, r)
		case s.slashRedirect(w, r, mux):
		default:
			h.ServeHTTP(&statusCatcher{ResponseWriter: w, notFound: func(w http.ResponseWriter) {
				t := s.roomText(r, roomOfPath(r.URL.Path))
				s.htmlPage(w, r, views.ErrorPage{Status: http.StatusNotFound, Heading: t.TitleNoSuchPage, Message: t.NoSuchPage})
			}}, r)
		}
	})
}

// slashRedirect answers a GET or HEAD of /s/{code}/ or /r/{room}/ with a
// 301 to the path without the slash, when a route takes that path, and
// reports whether it did.
func (s *Server) slashRedirect(w http.ResponseWriter, r *http.Request, mux *http.ServeMux) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p, ok := strings.CutSuffix(r.URL.Path, "/")
	if !ok || !(strings.HasPrefix(p, "/s/") || strings.HasPrefix(p, "/r/")) || strings.Count(p, "/") != 2 || len(p) == 3 {
		return false
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = p, ""
	if _, pattern := mux.Handler(r2); pattern == "" {
		return false
	}
	u := p
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r, u, http.StatusMovedPermanently)
	return true
}

// recoverPanics answers 500 with a JSON error instead of a stack trace.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic in handler", "method", r.Method, "path", r.URL.Path, "panic", v)
				response.WriteError(w, http.StatusInternalServerError, "internal", "Something went wrong on our side.")
			}
		}()
		next.ServeHTTP(w, r)
	})
}
