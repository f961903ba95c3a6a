package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// openStream opens the room's stream with cookie c (nil: a new visitor),
// and returns the response and a channel closed when the server ends it.
func openStream(t *testing.T, h *harness, c *http.Cookie) (*http.Response, <-chan struct{}) {
	t.Helper()
	return openStreamAt(t, h, "/r/"+h.room+"/events", nil, c)
}

// openStreamAt is openStream of the stream at path, with the request
// headers hdr.
func openStreamAt(t *testing.T, h *harness, path string, hdr map[string]string, c *http.Cookie) (*http.Response, <-chan struct{}) {
	t.Helper()
	req, _ := http.NewRequest("GET", h.srv.URL+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if c != nil {
		req.AddCookie(c)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	ended := make(chan struct{})
	if resp.StatusCode == 200 {
		go func() {
			io.Copy(io.Discard, resp.Body)
			close(ended)
		}()
	}
	return resp, ended
}

// TestStreamsPerVisitor: one cookie opening 6 streams holds at most
// MaxStreamsPerVisitor of them; each stream past the cap closes the
// visitor's oldest one, and the newest ones stay open.
func TestStreamsPerVisitor(t *testing.T) {
	h := newHarness(t, nil)
	in := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil)
	if in.status != 200 {
		t.Fatalf("enter: %d %s", in.status, in.body)
	}
	var ended []<-chan struct{}
	for i := range 6 {
		resp, end := openStream(t, h, in.cookie())
		if resp.StatusCode != 200 {
			t.Fatalf("stream %d of one visitor: %d, want 200", i+1, resp.StatusCode)
		}
		ended = append(ended, end)
		if i < MaxStreamsPerVisitor {
			waitFor(t, func() bool { return h.web.hub.Connections() == int64(i+1) })
			continue
		}
		select {
		case <-ended[i-MaxStreamsPerVisitor]:
		case <-time.After(5 * time.Second):
			t.Fatalf("stream %d did not close the visitor's oldest stream (%d)", i+1, i-MaxStreamsPerVisitor+1)
		}
	}
	// The evicted stream is closed, then forgotten.
	waitFor(t, func() bool { return h.web.hub.Connections() == MaxStreamsPerVisitor })
	time.Sleep(50 * time.Millisecond) // no stream the test did not expect
	if n := h.web.hub.Connections(); n != MaxStreamsPerVisitor {
		t.Fatalf("%d streams open for one visitor, want %d", n, MaxStreamsPerVisitor)
	}
	for i, end := range ended[6-MaxStreamsPerVisitor:] {
		select {
		case <-end:
			t.Fatalf("stream %d (one of the newest) was closed", 6-MaxStreamsPerVisitor+i+1)
		default:
		}
	}
}

// TestStreamsProcessCap: past HubOptions.MaxStreams, a buyer's connect is
// answered 503 JSON with Retry-After; a refused connect holds no slot.
func TestStreamsProcessCap(t *testing.T) {
	h := newHarness(t, func(o *Options) {
		o.Hub = NewHub(o.Queue.(PushSource), HubOptions{MaxStreams: 2}, o.Metrics, o.Log)
		t.Cleanup(o.Hub.Close)
	})
	for i := range 2 {
		if resp, _ := openStream(t, h, nil); resp.StatusCode != 200 {
			t.Fatalf("stream %d under the cap: %d", i+1, resp.StatusCode)
		}
	}
	for range 2 {
		resp, _ := openStream(t, h, nil)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || !strings.Contains(string(body), "too_many_connections") {
			t.Fatalf("stream past the process's cap: %d %v %s", resp.StatusCode, resp.Header, body)
		}
	}
	if n := h.web.hub.buyers.Load(); n != 2 {
		t.Fatalf("%d stream slots counted, want 2", n)
	}
}

// TestStreamThatMakesAPlaceIsAnEnter: in a room without a challenge, a
// known visitor's stream that makes a place takes an enter from the
// address's limit: with it spent, leave + stream cycles with one cookie
// make no new place (429).
func TestStreamThatMakesAPlaceIsAnEnter(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.EnterRatePerIP, o.EnterBurstPerIP = 0.0001, 1 })
	q := "/api/rooms/" + h.room + "/queue"
	in := h.do(t, "POST", q, "", nil, nil)
	if in.status != 200 {
		t.Fatalf("enter: %d %s", in.status, in.body)
	}
	for i := range 3 {
		if r := h.do(t, "DELETE", q, "", nil, in.cookie()); r.status != 200 {
			t.Fatalf("leave %d: %d %s", i+1, r.status, r.body)
		}
		resp, _ := openStream(t, h, in.cookie())
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("stream %d after leaving, enter limit spent: %d, want 429", i+1, resp.StatusCode)
		}
	}
	st, err := h.eng.Stats(context.Background(), h.room)
	if err != nil {
		t.Fatal(err)
	}
	if st.Issued != 1 {
		t.Fatalf("%d tickets issued with an enter limit of 1, want 1", st.Issued)
	}
}

// TestSweepBacksOff: a sweep of an address that freed nothing doubles the
// wait before the next one, up to sweepGoneMax; one that freed a slot
// brings it back to sweepGoneEvery.
func TestSweepBacksOff(t *testing.T) {
	hub := NewHub(&fakeSource{}, HubOptions{MaxPerIP: 1}, NewMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(hub.Close)
	if !hub.takeIP("a") {
		t.Fatal("first slot refused")
	}
	every := func() time.Duration {
		hub.mu.Lock()
		defer hub.mu.Unlock()
		return hub.perIP["a"].every
	}
	tests := []struct {
		freed int
		want  time.Duration
	}{
		{0, 100 * time.Millisecond},
		{0, 200 * time.Millisecond},
		{0, 400 * time.Millisecond},
		{0, 800 * time.Millisecond},
		{0, time.Second},
		{0, time.Second},
		{1, sweepGoneEvery},
		{0, 100 * time.Millisecond},
	}
	for i, tc := range tests {
		hub.swept("a", tc.freed)
		if got := every(); got != tc.want {
			t.Fatalf("sweep %d (freed %d): next after %v, want %v", i+1, tc.freed, got, tc.want)
		}
	}
}
