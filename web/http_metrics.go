package web

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
)

// routeUnmatched labels the answers of requests that no route matched.
const routeUnmatched = "unmatched"

// labelRoute wraps a route's handler: it records the pattern the mux
// matched (r.Pattern) in the statusRecorder of countResponses, found
// through the writers that wrap it: a label from the one list of routes,
// never the raw path, so that the label set stays bounded.
func labelRoute(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for inner := w; inner != nil; {
			if rec, ok := inner.(*statusRecorder); ok {
				rec.pattern = r.Pattern
				break
			}
			u, ok := inner.(interface{ Unwrap() http.ResponseWriter })
			if !ok {
				break
			}
			inner = u.Unwrap()
		}
		h.ServeHTTP(w, r)
	})
}

// countResponses counts every answer by route pattern and status code
// (waitingroom_http_responses_total). It sits outside every other
// middleware, so refusals and recovered panics count too.
func (s *Server) countResponses(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		route := rec.pattern
		if route == "" {
			route = routeUnmatched
		}
		code := "hijacked"
		switch {
		case rec.hijacked:
		case rec.code == 0:
			code = "200" // nothing written: net/http answers 200
		default:
			code = strconv.Itoa(rec.code)
		}
		s.metrics.HTTPResponses.WithLabelValues(route, code).Inc()
	})
}

// statusRecorder remembers the status code of an answer. It keeps the
// writer's optional abilities: Flush, Hijack and ReadFrom directly, and
// everything http.ResponseController offers through Unwrap.
type statusRecorder struct {
	http.ResponseWriter
	code     int // the final status written; 0 until then
	hijacked bool
	pattern  string // the route's, set by labelRoute; "" when none matched
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.code == 0 && code >= 200 { // 1xx answers are not final
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// ReadFrom keeps the underlying writer's sendfile path for static files.
func (w *statusRecorder) ReadFrom(r io.Reader) (int64, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return io.Copy(w.ResponseWriter, r)
}

// FlushError implements the interface http.ResponseController flushes
// through.
func (w *statusRecorder) FlushError() error {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Flush implements http.Flusher.
func (w *statusRecorder) Flush() { _ = w.FlushError() }

// Hijack implements http.Hijacker and marks the answer hijacked.
func (w *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = true
	}
	return c, rw, err
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }
