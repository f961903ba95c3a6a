package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/audit"
	"waitingroom/server/livestats"
	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
	"waitingroom/views"
	"waitingroom/web/console"
)

// fakeLive is a per-second record: every second of the last ten minutes
// with the same figures, and the latest second's waiting.
type fakeLive struct {
	mu     sync.Mutex
	sec    livestats.Second
	calls  int
	failed error
	// clock is the console's; each read moves it on by delay, as a slow
	// read would.
	clock *clockwork.FakeClock
	delay time.Duration
	// stuck: a read answers as a Redis that does not answer, once its
	// budget is spent: at once with the deadline's error, or, with no
	// deadline to spend, nothing until the test's own context ends.
	stuck bool
}

func (f *fakeLive) Series(ctx context.Context, _ string, since time.Time) ([]livestats.Second, error) {
	f.mu.Lock()
	if f.stuck {
		f.mu.Unlock()
		if _, ok := ctx.Deadline(); ok {
			return nil, context.DeadlineExceeded
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	defer f.mu.Unlock()
	f.calls++
	if f.delay > 0 {
		f.clock.Advance(f.delay)
	}
	if f.failed != nil {
		return nil, f.failed
	}
	// The series ends at the dashboard's own now, the end of the window
	// (10 minutes) it asks for. The wall clock read here instead put the
	// last second, the one with the failures, past the dashboard's now when
	// a second ended between the two reads (a loaded machine did).
	end := since.Add(10 * time.Minute)
	var out []livestats.Second
	for at := since.Truncate(time.Second).Add(time.Second); !at.After(end); at = at.Add(time.Second) {
		s := f.sec
		s.At = at
		s.Failed = nil
		out = append(out, s)
	}
	if len(out) > 0 {
		out[len(out)-1].Failed = f.sec.Failed // one second's failures
	}
	return out, nil
}

func (f *fakeLive) Instances(context.Context) ([]livestats.Instance, error) {
	return []livestats.Instance{{ID: "web-2", SSE: 7}, {ID: "web-1<b>", SSE: 1200}}, nil
}

// dashHarness is a server with the console wired to a freshly migrated
// PostgreSQL (operators, sessions, the audit log, orders), a product in
// its room, the sale's events in its audit log, and a fake live series.
// Its clock stands still until the test moves it.
type dashHarness struct {
	*orderHarness
	live   *fakeLive
	clock  *clockwork.FakeClock
	client *http.Client
	csrf   string
}

func newDashHarness(t *testing.T, streams int) *dashHarness {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// At the next whole second: after the room's creation (on the real
	// clock), and at the start of a second.
	clock := clockwork.NewFakeClockAt(time.Now().Truncate(time.Second).Add(time.Second))
	live := &fakeLive{clock: clock, sec: livestats.Second{Waiting: 40, Admitted: 3, Placed: 2, P50: 12 * time.Millisecond, P95: 85 * time.Millisecond, Rate: 5, Ticked: true,
		Failed: map[string]int64{"token_missing": 1, "token_invalid": 2, "token_used": 1, "rate_limited": 4, "sold_out": 5, "unavailable": 6, "bad_order": 1}}}
	odb := storetest.Migrated(t, store.Postgres) // the orders' own schema
	h, db := newConsoleHarness(t, func(o *Options) {
		withOrderService(o, order.NewService(order.NewStore(odb.DB, 0), o.Queue.(order.Gate), 0, quiet))
		o.Live, o.DashboardStreams, o.Clock = live, streams, clock
	})
	log := audit.New(db)
	ctx := context.Background()
	base := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	for i := 1; i <= 150; i++ {
		e := audit.Entry{At: base.Add(time.Duration(i) * time.Second), Actor: "kim", Room: h.room, Action: "product.update", Target: "1"}
		switch {
		case i == 2:
			e.Action, e.Actor, e.Target = "sale.opened", "system", ""
		case i == 3:
			e.Action, e.Old, e.New, e.Target = "sale.rate", "5", "<script>alert(1)</script>", ""
		case i%20 == 0:
			e.Action, e.Actor, e.Target = "room.pause", "lee", ""
		}
		if err := log.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := log.Record(ctx, audit.Entry{Actor: "system", Room: "other-room", Action: "sale.sold_out"}); err != nil {
		t.Fatal(err)
	}
	oh := &orderHarness{harness: h, db: odb}
	if err := odb.QueryRowx(`INSERT INTO products (room, name, price, stock) VALUES ($1, 'Sneakers', 129000, 10) RETURNING id`, h.room).Scan(&oh.product); err != nil {
		t.Fatal(err)
	}
	// The livestats reader leaves out the seconds before the room was
	// created, on the real clock: a harness that took past the clock's
	// start (a loaded machine did) moves it to the next whole second after.
	ms, err := h.rdb.HGet(ctx, queue.SettingsKey(queue.DefaultNamespace(h.rdb), h.room), queue.CreatedField).Int64()
	if err != nil {
		t.Fatalf("the room's creation time: %v", err)
	}
	if next := time.UnixMilli(ms).Truncate(time.Second).Add(time.Second); clock.Now().Before(next) {
		clock.Advance(next.Sub(clock.Now()))
	}
	c, csrf := signIn(t, h.srv, testAdminToken)
	return &dashHarness{orderHarness: oh, live: live, clock: clock, client: c, csrf: csrf}
}

// parked waits until n dashboard streams wait for their next tick on h's
// clock: each has sent the frames of the ticks so far.
func (h *dashHarness) parked(t *testing.T, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.clock.BlockUntilContext(ctx, n); err != nil {
		t.Fatalf("%d streams do not wait for their next tick", n)
	}
}

// tick moves h's clock on to the next tick of n streams, once they wait
// for it.
func (h *dashHarness) tick(t *testing.T, n int) {
	t.Helper()
	h.parked(t, n)
	h.clock.Advance(console.DashTick)
}

// reads is how many times the live series was read.
func (h *dashHarness) reads() int {
	h.live.mu.Lock()
	defer h.live.mu.Unlock()
	return h.live.calls
}

// frameTime reads the time of day of a frame's "Updated 17:38:46 UTC+09:00".
func frameTime(t *testing.T, frame string) time.Time {
	t.Helper()
	f := strings.Fields(text(t, frame, "dash-updated"))
	if len(f) < 2 {
		t.Fatalf("the frame's update line is %q", f)
	}
	at, err := time.Parse("15:04:05", f[1])
	if err != nil {
		t.Fatalf("the frame's update line %q: %v", f, err)
	}
	return at
}

// frameGap is how long after frame from's time of day frame to's is
// (across midnight too).
func frameGap(t *testing.T, from, to string) time.Duration {
	t.Helper()
	return (frameTime(t, to).Sub(frameTime(t, from)) + 24*time.Hour) % (24 * time.Hour)
}

func (h *dashHarness) get(t *testing.T, c *http.Client, path string) (*http.Response, string) {
	t.Helper()
	return h.getIn(t, c, path, "en")
}

// getIn gets path with c, in the language that Accept-Language asks for.
func (h *dashHarness) getIn(t *testing.T, c *http.Client, path, acceptLanguage string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", h.srv.URL+path, nil)
	req.Header.Set("Accept-Language", acceptLanguage)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// wantTexts checks the text of the elements of html, by id.
func wantTexts(t *testing.T, html string, want map[string]string) {
	t.Helper()
	for id, w := range want {
		if got := text(t, html, id); got != w {
			t.Errorf("#%s = %q, want %q", id, got, w)
		}
	}
}

// text returns the text of the element with id in html.
func text(t *testing.T, html, id string) string {
	t.Helper()
	i := strings.Index(html, `id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no #%s in the page", id)
	}
	rest := html[i:]
	rest = rest[strings.IndexByte(rest, '>')+1:]
	return strings.TrimSpace(rest[:strings.IndexByte(rest, '<')])
}

// sale places one order of 2 in h's room and puts 3 visitors in line.
func (h *dashHarness) sale(t *testing.T) {
	t.Helper()
	c, tok := h.admitted(t)
	if r := h.do(t, "POST", "/api/rooms/"+h.room+"/orders", `{"quantity":2}`, map[string]string{"X-Entry-Token": tok}, c); r.status != 201 {
		t.Fatalf("order: %d %s", r.status, r.body)
	}
	for range 3 {
		h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil)
	}
}

// TestDashboardPage: a live room with a placed order, three in line and a
// recorded series shows every figure, its charts and the sale's timeline.
func TestDashboardPage(t *testing.T) {
	t.Parallel()
	h := newDashHarness(t, 0)
	h.sale(t)
	resp, html := h.get(t, h.client, "/admin/rooms/"+h.room)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s", resp.StatusCode, html)
	}
	eta := views.For("en").Duration(1) // the last of 3 at 3 a second
	wantTexts(t, html, map[string]string{
		"dash-waiting":        "3",
		"dash-prequeued":      "0",
		"dash-active":         "0", // the order used the pass
		"dash-placed":         "1",
		"dash-orders-per-sec": "2",
		"dash-admitted":       "3 measured",
		"dash-eta":            eta,
		"dash-latency":        "12 ms · 85 ms",
		"dash-stock":          "2 sold · 8 left",
		"dash-fail-401":       "3",
		"dash-fail-409":       "1",
		"dash-fail-429":       "4",
		"dash-fail-soldout":   "5",
		"dash-fail-503":       "6",
		"dash-fail-other":     "1",
	})
	for _, want := range []string{
		`id="dash-live" data-src="/admin/rooms/` + h.room + `/live"`,
		`id="dash-reload" href="/admin/rooms/` + h.room + `"`,
		`href="/admin/rooms/` + h.room + `/settings"`,
		`<script src="/static/console-live.`, `href="/static/console-dashboard.`,
		`id="dash-chart-waiting"`, `id="dash-chart-admitted"`, `id="dash-chart-orders"`, `id="dash-chart-p95"`,
		`aria-label="Waiting: 40 now, at most 40 in the last 10 minutes"`,
		"web-1&lt;b&gt;", "1200",
		"&lt;script&gt;alert(1)&lt;/script&gt;", "Rate changed", "Paused by an operator",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	for _, bad := range []string{"<script>alert", "product.update", "NaN", "other-room"} {
		if strings.Contains(html, bad) {
			t.Errorf("the page has %s", bad)
		}
	}
	tl := html[strings.Index(html, `id="dash-timeline"`):]
	tl = tl[:strings.Index(tl, "</ol>")]
	// room.pause at 140, 120, … 20, then sale.rate and sale.opened: the
	// last four are on the audit log's second page.
	if n := strings.Count(tl, "<li>"); n != 9 {
		t.Errorf("timeline has %d events, want 9", n)
	}
	// In Asia/Seoul by default: 18:02:20 UTC is 03:02:20 the next day.
	if i, j := strings.Index(tl, "12-01 03:02:20 UTC+09:00"), strings.Index(tl, "12-01 03:00:20 UTC+09:00"); i < 0 || j < 0 || i > j {
		t.Errorf("timeline is not newest first, in Asia/Seoul:\n%s", tl)
	}
	if got := text(t, html, "dash-phase"); got != "Phase: Open" {
		t.Errorf("#dash-phase = %q", got)
	}
	if got := text(t, html, "dash-updated"); !strings.HasSuffix(got, " UTC+09:00") {
		t.Errorf("#dash-updated = %q, want Asia/Seoul's time", got)
	}

	// In the zone asked for, by the page and its stream.
	_, utc := h.get(t, h.client, "/admin/rooms/"+h.room+"?tz=UTC")
	for _, want := range []string{`data-src="/admin/rooms/` + h.room + `/live?tz=UTC"`, "11-30 18:02:20 UTC<"} {
		if !strings.Contains(utc, want) {
			t.Errorf("the page in UTC lacks %s", want)
		}
	}
	if got := text(t, utc, "dash-updated"); !strings.HasSuffix(got, " UTC") {
		t.Errorf("#dash-updated in UTC = %q", got)
	}

	// In Korean.
	_, ko := h.getIn(t, h.client, "/admin/rooms/"+h.room, "ko-KR,ko;q=0.9,en;q=0.5")
	for _, want := range []string{`lang="ko"`, "대기 중", "2개 판매 · 8개 남음", "입장 속도 변경"} {
		if !strings.Contains(ko, want) {
			t.Errorf("the Korean page lacks %s", want)
		}
	}

	// Paused, with nothing measured: no ETA, and it says why.
	s, _ := h.eng.Room(context.Background(), h.room)
	s.Paused = true
	h.eng.SaveRoom(context.Background(), h.room, s)
	h.live.mu.Lock()
	h.live.failed = fmt.Errorf("redis: connection refused")
	h.live.mu.Unlock()
	_, html = h.get(t, h.client, "/admin/rooms/"+h.room)
	if got := text(t, html, "dash-eta"); got != "— (paused)" {
		t.Errorf("paused ETA %q", got)
	}
	if !strings.Contains(html, "cannot be read right now") {
		t.Error("a failed read is not said")
	}
}

func TestDashboardRefusals(t *testing.T) {
	t.Parallel()
	h := newDashHarness(t, 0)
	anon := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/admin/rooms/" + h.room, "/admin/rooms/" + h.room + "/live"} {
		resp, _ := h.get(t, anon, path)
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/admin/signin") {
			t.Errorf("%s signed out: %d %s", path, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	for _, path := range []string{"/admin/rooms/no-such-room", "/admin/rooms/no-such-room/live", "/admin/rooms/BAD%20NAME"} {
		resp, body := h.get(t, h.client, path)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "There is no room named") {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
		}
	}
}

// sseReader reads a dashboard stream.
type sseReader struct {
	resp   *http.Response
	cancel context.CancelFunc
	events chan string // each event's data
	retry  chan string
}

func openLive(t *testing.T, h *dashHarness) *sseReader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", h.srv.URL+"/admin/rooms/"+h.room+"/live", nil)
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	s := &sseReader{resp: resp, cancel: cancel, events: make(chan string, 16), retry: make(chan string, 1)}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		return s
	}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "retry: "):
				s.retry <- strings.TrimPrefix(line, "retry: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			case line == "" && data != nil:
				s.events <- strings.Join(data, "\n")
				data = nil
			}
		}
		close(s.events)
	}()
	return s
}

func (s *sseReader) next(t *testing.T, within time.Duration) string {
	t.Helper()
	select {
	case e, ok := <-s.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return e
	case <-time.After(within):
		t.Fatalf("no event within %v", within)
	}
	return ""
}

// TestDashboardStream: the stream asks for a retry delay, sends the
// fragment at once and again at each tick of the console's clock, and
// ends when the client goes.
func TestDashboardStream(t *testing.T) {
	t.Parallel()
	h := newDashHarness(t, 0)
	s := openLive(t, h)
	if s.resp.StatusCode != 200 || s.resp.Header.Get("Content-Type") != "text/event-stream" || s.resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("%d %v", s.resp.StatusCode, s.resp.Header)
	}
	select {
	case r := <-s.retry:
		if r != "3000" {
			t.Errorf("retry: %s", r)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no retry line")
	}
	first := s.next(t, 2*time.Second)
	for _, want := range []string{`id="dash-waiting"`, `id="dash-orders-per-sec"`, `id="dash-placed"`, `id="dash-timeline"`, "&lt;script&gt;"} {
		if !strings.Contains(first, want) {
			t.Errorf("the fragment lacks %s", want)
		}
	}
	if strings.Contains(first, "<html") || strings.Contains(first, "<script>") {
		t.Error("the fragment is more than the fragment, or unescaped")
	}
	h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil)
	h.parked(t, 1)
	select {
	case e := <-s.events:
		t.Fatalf("a fragment before the tick: %.200s", e)
	default:
	}
	h.clock.Advance(console.DashTick)
	second := s.next(t, 2*time.Second)
	if gap := frameGap(t, first, second); gap != console.DashTick {
		t.Errorf("the second fragment is of %v after the first, want %v", gap, console.DashTick)
	}
	if text(t, second, "dash-waiting") != "1" {
		t.Errorf("the second fragment does not follow the line: waiting %q", text(t, second, "dash-waiting"))
	}
	if n := h.web.console.DashboardStreams(); n != 1 {
		t.Fatalf("%d streams open, want 1", n)
	}
	s.cancel()
	waitStreams(t, h, 0, 3*time.Second)
	// The stream's ticks ended with it: the clock moving on reads nothing.
	calls := h.reads()
	h.clock.Advance(3 * console.DashTick)
	if n := h.reads(); n != calls {
		t.Errorf("the stream still reads after its client went (%d reads, then %d)", calls, n)
	}
}

// TestDashboardStreamCap: past the cap a stream is refused with 503 and a
// Retry-After, and a freed slot is taken again.
func TestDashboardStreamCap(t *testing.T) {
	t.Parallel()
	h := newDashHarness(t, 2)
	a, b := openLive(t, h), openLive(t, h)
	a.next(t, 2*time.Second)
	b.next(t, 2*time.Second)
	c := openLive(t, h)
	if c.resp.StatusCode != http.StatusServiceUnavailable || c.resp.Header.Get("Retry-After") != "10" {
		t.Fatalf("third stream: %d, Retry-After %q", c.resp.StatusCode, c.resp.Header.Get("Retry-After"))
	}
	// The open streams keep flowing, and share each second's frame: two
	// viewers cost one read of the series a second, not two.
	calls := h.reads()
	for range 4 {
		h.tick(t, 2)
		a.next(t, 2*time.Second)
		b.next(t, 2*time.Second)
	}
	if reads := h.reads() - calls; reads != 4 {
		t.Errorf("two streams read the series %d times in 4 ticks, want 4", reads)
	}
	a.cancel()
	waitStreams(t, h, 1, 3*time.Second)
	d := openLive(t, h)
	if d.resp.StatusCode != 200 {
		t.Fatalf("the freed slot was not given back: %d", d.resp.StatusCode)
	}
	d.next(t, 2*time.Second)
}

// smallBuffers makes every accepted connection's send buffer small, so
// that a client that stops reading blocks the server's writes at once.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}

// TestDashboardStreamDeadlines: past the server's WRITE_TIMEOUT a stream
// keeps flowing (it sets its own deadline for each write), and a client
// that stops reading is dropped by its write deadline, not held. Write
// deadlines are on the real clock, the ticks on the console's: the
// server's is made to pass before the stream's first write.
func TestDashboardStreamDeadlines(t *testing.T) {
	t.Parallel()
	h := newDashHarness(t, 0)
	h.web.console.SetDashboardTimes(500*time.Millisecond, console.DashSessionCheck)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h.web.Handler(), WriteTimeout: time.Nanosecond, ReadHeaderTimeout: time.Second}
	go srv.Serve(smallBuffers{ln})
	t.Cleanup(func() { srv.Close() })
	h.srv.URL = "http://" + ln.Addr().String()

	s := openLive(t, h)
	s.next(t, 2*time.Second)
	for range 3 {
		h.tick(t, 1)
		s.next(t, 2*time.Second)
	}
	s.cancel()
	waitStreams(t, h, 0, 3*time.Second)

	// A client that reads the headers and then nothing.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4096)
	u, _ := url.Parse(h.srv.URL + "/admin/rooms/")
	var cookie string
	for _, ck := range h.client.Jar.Cookies(u) {
		cookie += ck.Name + "=" + ck.Value
	}
	fmt.Fprintf(c, "GET /admin/rooms/%s/live HTTP/1.1\r\nHost: x\r\nCookie: %s\r\n\r\n", h.room, cookie)
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	head := make([]byte, 512)
	if _, err := io.ReadFull(c, head); err != nil || !strings.HasPrefix(string(head), "HTTP/1.1 200") {
		t.Fatalf("%q %v", head, err)
	}
	c.SetReadDeadline(time.Time{})
	waitStreams(t, h, 1, 3*time.Second)
	// Each tick writes a frame that nobody reads: the kernel's buffers
	// fill, then a write times out and the stream ends.
	for h.parkedOrGone(t, 20*time.Second) {
		h.clock.Advance(console.DashTick)
	}
}

// parkedOrGone waits until h's one dashboard stream waits for its next
// tick (true) or has ended (false).
func (h *dashHarness) parkedOrGone(t *testing.T, within time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	for h.web.console.DashboardStreams() != 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		err := h.clock.BlockUntilContext(ctx, 1)
		cancel()
		if err == nil {
			return true
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stream neither waits for its next tick nor ends after %v", within)
		}
	}
	return false
}

func waitStreams(t *testing.T, h *dashHarness, n int64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for h.web.console.DashboardStreams() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams open after %v, want %d", h.web.console.DashboardStreams(), within, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDashboardWithRealLiveStats: what the live stats recorder writes to
// Redis (a tick, orders placed and refused, this instance's heartbeat)
// reaches the dashboard's figures and charts through the real reader.
func TestDashboardWithRealLiveStats(t *testing.T) {
	t.Parallel()
	h := newDashHarness(t, 0)
	ns := queue.DefaultNamespace(h.rdb)
	h.web.console.SetLive(livestats.NewReader(h.rdb, ns).WithClock(h.clock))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	id := "dash-test-" + h.room
	rec := livestats.NewRecorder(h.rdb, ns, id, func() int64 { return 4321 }, quiet).WithClock(h.clock)
	t.Cleanup(func() { h.rdb.HDel(context.Background(), ns+":live:instances", id) })
	// Record in one second, read in the next: the figures' rates are of
	// full seconds.
	rec.RecordTick(h.room, queue.Admission{Visitors: make([]string, 30), Waiting: 77, Active: 30, Rate: 25})
	for range 20 {
		rec.ObserveOrder(h.room, "placed", 30*time.Millisecond)
	}
	rec.ObserveOrder(h.room, "token_used", time.Millisecond)
	rec.ObserveOrder(h.room, "rate_limited", time.Millisecond)
	ctx := context.Background()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rec.Heartbeat(ctx); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Second)
	_, html := h.get(t, h.client, "/admin/rooms/"+h.room)
	for id, want := range map[string]string{
		// 20 orders and 30 admissions in the last ten full seconds (the
		// reader gives every second, unrecorded ones as zero).
		"dash-orders-per-sec": "2",
		"dash-admitted":       "3 measured",
		"dash-fail-409":       "1",
		"dash-fail-429":       "1",
		"dash-fail-401":       "0",
	} {
		if got := text(t, html, id); got != want {
			t.Errorf("#%s = %q, want %q", id, got, want)
		}
	}
	for _, want := range []string{">" + id + "</th><td>4321<", `aria-label="Waiting: 77 now, at most 77`, `aria-label="Orders per second: 0 now, at most 20`} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// TestDashboardStreamSlowRender: a render that takes 400 ms, from 0.8 s
// into a second to 0.2 s into the next, still gives the stream a fresh
// frame at every tick: the frame is the second its render started in,
// not the one it ended in, which the next tick would share.
func TestDashboardStreamSlowRender(t *testing.T) {
	t.Parallel()
	h := newDashHarness(t, 0)
	const delay = 400 * time.Millisecond
	h.live.mu.Lock()
	h.live.delay = delay
	h.live.mu.Unlock()
	// The stream opens 0.4 s into a second; its first render ends 0.8 s
	// into it, and its ticks come a second apart from there.
	h.clock.Advance(delay)
	s := openLive(t, h)
	if s.resp.StatusCode != 200 {
		t.Fatal(s.resp.StatusCode)
	}
	prev := s.next(t, 2*time.Second)
	next := h.clock.Now().Add(console.DashTick)
	for range 8 {
		h.parked(t, 1)
		h.clock.Advance(h.clock.Until(next))
		next = next.Add(console.DashTick)
		cur := s.next(t, 2*time.Second)
		if gap := frameGap(t, prev, cur); gap != time.Second {
			t.Fatalf("a frame %v after the one before: want each tick's own second", gap)
		}
		prev = cur
	}
}

// TestDashboardStreamEndsAtSignOut: a stream whose session is signed out
// ends at its next session check, not at the end of its life.
func TestDashboardStreamEndsAtSignOut(t *testing.T) {
	t.Parallel()
	h := newDashHarness(t, 0)
	s := openLive(t, h)
	if s.resp.StatusCode != 200 {
		t.Fatal(s.resp.StatusCode)
	}
	s.next(t, 2*time.Second)
	// Past one check, the session still open.
	h.parked(t, 1)
	h.clock.Advance(console.DashSessionCheck)
	s.next(t, 2*time.Second)
	resp, _ := postForm(t, h.client, h.srv.URL+"/admin/signout", url.Values{"csrf": {h.csrf}}, nil)
	if resp.StatusCode != 303 {
		t.Fatalf("sign-out: %d", resp.StatusCode)
	}
	// Between checks the stream goes on; at the next it ends.
	h.tick(t, 1)
	s.next(t, 2*time.Second)
	h.parked(t, 1)
	h.clock.Advance(console.DashSessionCheck - console.DashTick)
	select {
	case e, ok := <-s.events:
		if ok {
			t.Fatalf("a frame after the session check: %.200s", e)
		}
	case <-time.After(4 * time.Second):
		t.Fatal("the stream outlived its session")
	}
	waitStreams(t, h, 0, time.Second)
}

// TestDashboardStuckSeriesLeavesTheOthers: a series read that never
// answers spends its own budget only: the line, the orders placed, the
// stock and the timeline still show their real values, and the figures
// taken from the series show "—" with the time of their last good
// reading, never 0.
func TestDashboardStuckSeriesLeavesTheOthers(t *testing.T) {
	t.Parallel()
	h := newDashHarness(t, 0)
	h.sale(t)
	if _, html := h.get(t, h.client, "/admin/rooms/"+h.room+"?tz=UTC"); strings.Contains(html, "cannot be read") {
		t.Fatalf("a healthy read is unavailable:\n%s", html)
	}
	h.live.mu.Lock()
	h.live.stuck = true
	h.live.mu.Unlock()
	resp, html := h.get(t, h.client, "/admin/rooms/"+h.room+"?tz=UTC")
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, html)
	}
	wantTexts(t, html, map[string]string{
		"dash-waiting":         "3",
		"dash-active":          "0",
		"dash-placed":          "1",
		"dash-stock":           "2 sold · 8 left",
		"dash-orders-per-sec":  "—",
		"dash-latency":         "—",
		"dash-failures-unread": "—",
	})
	if !strings.Contains(html, "The live figures cannot be read right now") {
		t.Error("the page does not say that a figure cannot be read")
	}
	if !regexp.MustCompile(`<small class="dash-asof">last read \d\d:\d\d:\d\d UTC</small>`).MatchString(html) {
		t.Error("the unread figures lack the time of their last good reading")
	}
	if strings.Contains(html, "No events yet") || !strings.Contains(html, "Rate changed") {
		t.Error("the timeline lost its events to the series' read")
	}
}
