package web

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestHTTPResponsesByRoute: every answer of the public handler is counted
// by the route pattern it matched and its status; the raw path (here the
// room's name) never becomes a label; hijacked SSE streams and recovered
// panics count too.
func TestHTTPResponsesByRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	m := h.web.metrics
	get := func(path string) *http.Response {
		resp, err := http.Get(h.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	tests := []struct {
		name, method, path string
		route, code        string
	}{
		{"enter", "POST", "/api/rooms/" + h.room + "/queue", "POST /api/rooms/{room}/queue", "200"},
		{"unknown room", "GET", "/api/rooms/no-such-room-x/products", "GET /api/rooms/{room}/products", "404"},
		{"no route", "GET", "/no/such/" + h.room, routeUnmatched, "404"},
		{"wrong method", "PATCH", "/healthz", routeUnmatched, "405"},
		{"health", "GET", "/healthz", "GET /healthz", "200"},
		{"static", "GET", "/robots.txt", "GET /robots.txt", "200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := m.HTTPResponses.WithLabelValues(tt.route, tt.code)
			before := testutil.ToFloat64(c)
			r := h.do(t, tt.method, tt.path, "", nil, nil)
			if strconv.Itoa(r.status) != tt.code {
				t.Fatalf("%s %s answered %d, want %s", tt.method, tt.path, r.status, tt.code)
			}
			if got := testutil.ToFloat64(c) - before; got != 1 {
				t.Errorf("%s %s counted %v times under {route=%q,code=%q}, want 1", tt.method, tt.path, got, tt.route, tt.code)
			}
		})
	}

	t.Run("sse stream", func(t *testing.T) {
		c := m.HTTPResponses.WithLabelValues("GET /r/{room}/events", "hijacked")
		before := testutil.ToFloat64(c)
		resp := get("/r/" + h.room + "/events")
		defer resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "retry: ") {
			t.Fatalf("first line %q, %v: the stream does not start through the wrapper", line, err)
		}
		// Counted when the handler returns, just after its first write.
		deadline := time.Now().Add(5 * time.Second)
		for testutil.ToFloat64(c) == before && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if got := testutil.ToFloat64(c) - before; got != 1 {
			t.Errorf("the SSE stream counted %v times as hijacked, want 1", got)
		}
	})

	// No label carries the raw path: every route label is a registered
	// pattern or "unmatched".
	patterns := map[string]bool{routeUnmatched: true}
	for _, rt := range h.web.routes() {
		patterns[rt.pattern] = true
	}
	got, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range got {
		if mf.GetName() != "waitingroom_http_responses_total" {
			continue
		}
		for _, s := range mf.GetMetric() {
			n++
			for _, l := range s.GetLabel() {
				if l.GetName() == "route" && !patterns[l.GetValue()] {
					t.Errorf("route label %q is not a route pattern", l.GetValue())
				}
				if strings.Contains(l.GetValue(), h.room) {
					t.Errorf("label %s=%q carries the room's name", l.GetName(), l.GetValue())
				}
			}
		}
	}
	if n < len(tests) {
		t.Errorf("%d series of waitingroom_http_responses_total, want at least %d", n, len(tests))
	}
}

func TestPanicCountsAs500(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.Queue = panicky{o.Queue} })
	c := h.web.metrics.HTTPResponses.WithLabelValues("POST /api/rooms/{room}/queue", "500")
	if r := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil); r.status != 500 {
		t.Fatalf("panic answered %d", r.status)
	}
	if got := testutil.ToFloat64(c); got != 1 {
		t.Fatalf("a recovered panic counted %v times as 500, want 1", got)
	}
}

// TestStatusRecorderKeepsWriterAbilities: behind the counting wrapper a
// streaming handler can still flush (as an http.Flusher and through
// http.ResponseController), set deadlines (through Unwrap) and take the
// connection over; and the status is the one written.
func TestStatusRecorderKeepsWriterAbilities(t *testing.T) {
	t.Parallel()
	s := &Server{metrics: NewMetrics()}
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("GET /flusher", labelRoute(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		<-release
	})))
	mux.Handle("GET /controller", labelRoute(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if err := rc.SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			http.Error(w, "deadline: "+err.Error(), 500)
			return
		}
		io.WriteString(w, "first\n")
		if err := rc.Flush(); err != nil {
			http.Error(w, "flush: "+err.Error(), 500)
			return
		}
		<-release
	})))
	mux.Handle("GET /hijack", labelRoute(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nc, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			http.Error(w, "hijack: "+err.Error(), 500)
			return
		}
		io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nfirst\n")
		nc.Close()
	})))
	srv := httptest.NewServer(s.countResponses(mux))
	defer srv.Close()

	want := map[string]string{"/flusher": "202", "/controller": "200", "/hijack": "hijacked"}
	for path := range want {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		// The flushing handlers still run (they wait for release): the
		// line arrives only if the flush went through the wrapper.
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		resp.Body.Close()
		if err != nil || line != "first\n" {
			t.Errorf("%s: read %q, %v before the handler ended", path, line, err)
		}
	}
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for path, code := range want {
		c := s.metrics.HTTPResponses.WithLabelValues("GET "+path, code)
		for testutil.ToFloat64(c) == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond) // counted when the handler returns
		}
		if got := testutil.ToFloat64(c); got != 1 {
			t.Errorf("%s counted %v under code %q, want 1", path, got, code)
		}
	}
}
