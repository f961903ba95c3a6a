package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"waitingroom/web/sse"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/views"
)

// setBranding changes the harness room's settings.
func (h *harness) setRoom(t *testing.T, mut func(*room.Settings)) {
	t.Helper()
	set, err := h.eng.Room(context.Background(), h.room)
	if err != nil {
		t.Fatal(err)
	}
	mut(&set)
	if err := h.eng.SaveRoom(context.Background(), h.room, set); err != nil {
		t.Fatal(err)
	}
}

// TestWidgetPage: the widget is frameable by the room's embed origins
// alone, sets no cookie, takes no ticket, and links the room top-level
// with the host page's utm_* and click ids; the room page stays
// unframeable.
func TestWidgetPage(t *testing.T) {
	t.Parallel()
	h := newClockedHarness(t, nil)
	// A request that names no language gets the room's default; the
	// room's accent stylesheet applies.
	h.setRoom(t, func(s *room.Settings) { s.DefaultLanguage, s.AccentColor = "ko", "#1d4ed8" })
	r := h.do(t, "GET", "/r/"+h.room+"/widget", "", nil, nil)
	if !strings.Contains(r.body, "판매 페이지로 가기") || !strings.Contains(r.body, `href="/r/`+h.room+`/theme/`) || r.header.Get("Content-Language") != "ko" {
		t.Fatalf("default language or theme missing: %s\n%s", r.header, r.body)
	}
	before, _ := h.eng.Stats(context.Background(), h.room)
	for _, tc := range []struct {
		name      string
		origins   []string
		target    string
		query     string
		lang      string
		ancestors string
		wantLink  string
		wantAttrs string
		wantText  string
	}{
		{"no origins", nil, "", "", "en", "frame-ancestors 'none'", `href="/r/ROOM"`, `target="_blank" rel="noopener"`, "Go to the sale"},
		{"two origins, utm and click ids", []string{"https://shop.example", "http://127.0.0.1:8081"}, "", "?utm_source=news&utm_campaign=spring&gclid=g1&evil=x",
			"ko", "frame-ancestors https://shop.example http://127.0.0.1:8081", `href="/r/ROOM?gclid=g1&amp;utm_campaign=spring&amp;utm_source=news"`,
			`target="_blank" rel="noopener"`, "판매 페이지로 가기"},
		{"same tab", []string{"https://shop.example"}, room.EmbedSameTab, "", "en", "frame-ancestors https://shop.example", `href="/r/ROOM"`, `target="_top">`, "Go to the sale"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.setRoom(t, func(s *room.Settings) { s.EmbedOrigins, s.EmbedTarget = tc.origins, tc.target })
			h.clock.Advance(widgetTTL) // the cached settings expire
			r := h.do(t, "GET", "/r/"+h.room+"/widget"+tc.query, "", map[string]string{"Accept-Language": tc.lang}, nil)
			if r.status != 200 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			csp := r.header.Get("Content-Security-Policy")
			if !strings.HasSuffix(csp, tc.ancestors) || !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("CSP %q, want it to end with %q", csp, tc.ancestors)
			}
			if x := r.header.Get("X-Frame-Options"); x != "" {
				t.Errorf("X-Frame-Options %q conflicts with frame-ancestors", x)
			}
			if c := r.header.Values("Set-Cookie"); len(c) > 0 {
				t.Errorf("the widget set cookies %v", c)
			}
			for _, want := range []string{strings.ReplaceAll(tc.wantLink, "ROOM", h.room), tc.wantAttrs, tc.wantText, `aria-live="polite"`} {
				if !strings.Contains(r.body, want) {
					t.Errorf("page lacks %s:\n%s", want, r.body)
				}
			}
			if strings.Contains(r.body, "evil") || strings.Contains(r.body, "<script>") {
				t.Error("the page carries an unknown field or an inline script")
			}
		})
	}
	after, _ := h.eng.Stats(context.Background(), h.room)
	if after.Issued != before.Issued {
		t.Fatalf("widget loads took %d tickets", after.Issued-before.Issued)
	}
	// The room page itself stays unframeable, embed origins or not.
	r = h.do(t, "GET", "/r/"+h.room, "", nil, nil)
	if csp := r.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || r.header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("room page: CSP %q, X-Frame-Options %q", csp, r.header.Get("X-Frame-Options"))
	}
	// The console's preview frames it from this origin too.
	r = h.do(t, "GET", "/r/"+h.room+"/widget?preview=1", "", nil, nil)
	if csp := r.header.Get("Content-Security-Policy"); !strings.HasSuffix(csp, "frame-ancestors 'self' https://shop.example") {
		t.Fatalf("preview CSP %q", csp)
	}
	if r := h.do(t, "GET", "/r/no-such-room-w/widget", "", nil, nil); r.status != 404 {
		t.Fatalf("unknown room: %d", r.status)
	}
}

// TestWidgetStatus: the polling answer is the same bytes for everyone
// within a second, with the schedule and the server's clock.
func TestWidgetStatus(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	opens := time.Now().Add(2 * time.Hour).Truncate(time.Second)
	h.setRoom(t, func(s *room.Settings) { s.OpensAt = &opens })
	a := h.do(t, "GET", "/r/"+h.room+"/widget/status", "", nil, nil)
	b := h.do(t, "GET", "/r/"+h.room+"/widget/status", "", map[string]string{"Accept-Language": "ko"}, nil)
	cut := func(s string) string { return s[:strings.Index(s, `,"serverTime":`)] } // the clock is each answer's own
	if a.status != 200 || cut(a.body) != cut(b.body) {
		t.Fatalf("status %d; bodies differ:\n%s\n%s", a.status, a.body, b.body)
	}
	if a.header.Get("Set-Cookie") != "" || a.header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers %v", a.header)
	}
	var v struct {
		Phase      string `json:"phase"`
		OpensAt    int64  `json:"opensAt"`
		ServerTime int64  `json:"serverTime"`
	}
	if err := json.Unmarshal([]byte(a.body), &v); err != nil {
		t.Fatal(err)
	}
	if v.Phase != queue.PhaseScheduled || v.OpensAt != opens.UnixMilli() || v.ServerTime < time.Now().Add(-5*time.Second).UnixMilli() {
		t.Fatalf("status %s", a.body)
	}
}

// TestWidgetStreams: widget viewers share the room's ticks, hold no
// ticket and no cookie, and are capped with a clear 503.
func TestWidgetStreams(t *testing.T) {
	t.Parallel()
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Rate = 5
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	in := startInstance(t, rdb, eng, name, 100*time.Millisecond, true, sse.Options{MaxWidgets: 3, MaxPerIP: 3})
	url := in.url + "/r/" + name + "/widget/events"
	var clients []*sseClient
	for range 3 {
		clients = append(clients, follow(t, url, nil, ""))
	}
	for i, c := range clients {
		if first := c.next(t, eventWait); string(first.Event) != "room" {
			t.Fatalf("client %d: first event %q", i, first.Event)
		}
	}
	// A change a widget shows arrives live (a tick that changes nothing
	// it shows sends no frame).
	set.Paused = true
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	for i, c := range clients {
		for {
			e := c.next(t, eventWait)
			if string(e.Event) == "room" && field(t, e, "paused") == "true" {
				if field(t, e, "phase") != queue.PhaseOpen || string(e.ID) == "" {
					t.Fatalf("client %d: event %s", i, e.Data)
				}
				break
			}
		}
	}
	if n := in.hub.Widgets(); n != 3 {
		t.Fatalf("hub holds %d widget streams, want 3", n)
	}
	if head, err := http.Head(url); err != nil || head.StatusCode != http.StatusOK || head.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("HEAD of the widget stream: %v %v", head, err)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Set-Cookie") != "" {
		t.Fatalf("a fourth widget stream: %d, cookies %v", resp.StatusCode, resp.Header.Values("Set-Cookie"))
	}
	st, err := eng.Stats(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Issued != 0 {
		t.Fatalf("widget viewers took %d tickets", st.Issued)
	}
	// Viewers behind this address took its 3 widget streams, not the
	// stream of a buyer behind it.
	buyer, err := http.Get(in.url + "/r/" + name + "/events")
	if err != nil {
		t.Fatal(err)
	}
	buyer.Body.Close()
	if buyer.StatusCode != http.StatusOK {
		t.Fatalf("a buyer behind the viewers' address: %d", buyer.StatusCode)
	}
	clients[0].cancel()
	deadline := time.Now().Add(20 * time.Second) // a heartbeat or a tick finds the closed peer
	for in.hub.Widgets() != 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := in.hub.Widgets(); n != 2 {
		t.Fatalf("after a viewer left the hub holds %d widget streams", n)
	}
}

// TestWidgetText words every phase, counting down from the server's view.
func TestWidgetText(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_800_000_000_000)
	eta := int64(230)
	for _, tc := range []struct {
		name         string
		v            sse.View
		lang         string
		state, extra string
	}{
		{"countdown", sse.View{Phase: queue.PhaseScheduled, OpensAt: now.Add(2*time.Hour + 14*time.Minute + 5*time.Second).UnixMilli()}, "en", "Opens in 02:14:05", ""},
		{"countdown to the pre-queue", sse.View{Phase: queue.PhaseScheduled, PrequeueAt: now.Add(90 * time.Second).UnixMilli(), OpensAt: now.Add(time.Hour).UnixMilli()}, "en", "Line opens in 00:01:30", "Opens in 01:00:00"},
		{"countdown to the pre-queue, Korean", sse.View{Phase: queue.PhaseScheduled, PrequeueAt: now.Add(90 * time.Second).UnixMilli()}, "ko", "00:01:30 후 대기열 시작", ""},
		{"pre-queue time passed, no tick yet", sse.View{Phase: queue.PhaseScheduled, PrequeueAt: now.Add(-time.Second).UnixMilli(), OpensAt: now.Add(time.Minute).UnixMilli()}, "en", "Opens in 00:01:00", ""},
		{"countdown over", sse.View{Phase: queue.PhaseScheduled, OpensAt: now.Add(-time.Second).UnixMilli()}, "en", "Opening…", ""},
		{"pre-queue", sse.View{Phase: queue.PhasePrequeue, OpensAt: now.Add(time.Minute).UnixMilli()}, "en", "The pre-queue is open", "Opens in 00:01:00"},
		{"waiting", sse.View{Phase: queue.PhaseOpen, Waiting: 1284, ETA: &eta}, "en", "1,284 waiting · about 4 min", ""},
		{"waiting, Korean", sse.View{Phase: queue.PhaseOpen, Waiting: 1284, ETA: &eta}, "ko", "1,284명 대기 중 · 약 4분", ""},
		{"a wait of hours", sse.View{Phase: queue.PhaseOpen, Waiting: 9000, ETA: ptrTo(int64(3600 + 5*60 + 1))}, "en", "9,000 waiting · about 1 h 6 min", ""},
		{"a wait of an hour, Korean", sse.View{Phase: queue.PhaseOpen, Waiting: 9000, ETA: ptrTo(int64(3600))}, "ko", "9,000명 대기 중 · 약 1시간", ""},
		{"a wait of seconds", sse.View{Phase: queue.PhaseOpen, Waiting: 2, ETA: ptrTo(int64(0))}, "en", "2 waiting · about 1 s", ""},
		{"open, nobody waiting", sse.View{Phase: queue.PhaseOpen}, "en", "Open now", ""},
		{"paused", sse.View{Phase: queue.PhaseOpen, Waiting: 5, Paused: true}, "en", "The line is paused", ""},
		{"sold out", sse.View{Phase: queue.PhaseOpen, SoldOut: true}, "en", "Sold out", ""},
		{"ended", sse.View{Phase: queue.PhaseClosed}, "en", "This sale has ended", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state, extra := widgetText(views.For(tc.lang), tc.v, now)
			if state != tc.state || extra != tc.extra {
				t.Fatalf("got %q, %q; want %q, %q", state, extra, tc.state, tc.extra)
			}
		})
	}
}

// TestEmbedScriptAtAStableURL: hosts paste the snippet once, so embed.js
// answers at unhashed URLs with a short cache.
func TestEmbedScriptAtAStableURL(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	for _, path := range []string{"/static/embed.js", "/embed.js"} {
		r := h.do(t, "GET", path, "", nil, nil)
		if r.status != 200 || r.header.Get("Cache-Control") != "public, max-age=300" ||
			!strings.HasPrefix(r.header.Get("Content-Type"), "text/javascript") || !strings.Contains(r.body, "wr-widget-size") {
			t.Fatalf("%s: %d %v", path, r.status, r.header)
		}
	}
}

// countingRooms counts the settings reads.
type countingRooms struct {
	widgetRoomsStore
	reads atomic.Int64
}

// widgetRoomsStore is the room store that countingRooms wraps.
type widgetRoomsStore = Rooms

func (c *countingRooms) Room(ctx context.Context, name string) (room.Settings, error) {
	c.reads.Add(1)
	return c.widgetRoomsStore.Room(ctx, name)
}

// TestWidgetBurstCostsOneRead: a crowd of viewers loading the widget at
// once, when the cached entry has just expired, costs one settings read.
func TestWidgetBurstCostsOneRead(t *testing.T) {
	t.Parallel()
	var counted *countingRooms
	h := newClockedHarness(t, func(o *Options) {
		counted = &countingRooms{widgetRoomsStore: o.Rooms}
		o.Rooms = counted
	})
	if r := h.do(t, "GET", "/r/"+h.room+"/widget/status", "", nil, nil); r.status != 200 {
		t.Fatalf("status %d", r.status)
	}
	h.clock.Advance(widgetTTL) // the cached entry expires
	before := counted.reads.Load()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			resp, err := http.Get(h.srv.URL + "/r/" + h.room + "/widget/status")
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if n := counted.reads.Load() - before; n > 2 {
		t.Fatalf("50 viewers at once cost %d settings reads", n)
	}
}

// TestWidgetOfUnknownRoom: polls of an unknown or deleted room answer 404
// and reuse the cached "not found": a burst costs one settings read.
func TestWidgetOfUnknownRoom(t *testing.T) {
	t.Parallel()
	var counted *countingRooms
	h := newHarness(t, func(o *Options) {
		counted = &countingRooms{widgetRoomsStore: o.Rooms}
		o.Rooms = counted
	})
	for _, tc := range []struct {
		name, path string
		reads      int64
	}{
		{"status", "/r/no-such-room-widget/widget/status", 1},
		{"page (its language from the room face, which caches apart)", "/r/no-such-room-widget2/widget", 2},
		{"events", "/r/no-such-room-widget3/widget/events", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := counted.reads.Load()
			for range 5 {
				if r := h.do(t, "GET", tc.path, "", nil, nil); r.status != http.StatusNotFound {
					t.Fatalf("status %d, want 404", r.status)
				}
			}
			if n := counted.reads.Load() - before; n != tc.reads {
				t.Fatalf("5 polls of an unknown room cost %d settings reads, want %d", n, tc.reads)
			}
		})
	}
}

// TestWidgetStreamOfDeletedRoom: a room deleted under its open widget
// streams sends them a closing "gone" event (here found by the hub's
// resync), while a buyer's stream is left as it was.
func TestWidgetStreamOfDeletedRoom(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	if err := eng.SaveRoom(context.Background(), name, room.Defaults(name)); err != nil {
		t.Fatal(err)
	}
	in := startInstance(t, rdb, eng, name, time.Hour, true, sse.Options{MaxWidgets: 3, MaxPerIP: 3, Heartbeat: 200 * time.Millisecond})
	for _, tc := range []struct {
		name string
		gone func()
	}{
		{"resync finds no room", func() { in.hub.Subscribed() }},
		{"deleted by another process: the quiet room is resynced", func() {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := follow(t, in.url+"/r/"+name+"/widget/events", nil, "")
			if e := c.next(t, eventWait); string(e.Event) != "room" {
				t.Fatalf("first event %q", e.Event)
			}
			if err := eng.SaveRoom(context.Background(), name, room.Defaults(name)); err != nil {
				t.Fatal(err)
			}
			if _, err := eng.DeleteRoom(context.Background(), name); err != nil {
				t.Fatal(err)
			}
			tc.gone()
			if e := c.next(t, eventWait); string(e.Event) != "gone" {
				t.Fatalf("after the deletion: event %q %s", e.Event, e.Data)
			}
			deadline := time.Now().Add(5 * time.Second)
			for in.hub.Widgets() != 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if n := in.hub.Widgets(); n != 0 {
				t.Fatalf("the deleted room's widget streams still open: %d", n)
			}
		})
	}
}

// TestWidgetStatusCarriesTheClock: each status answer carries the
// server's clock of its own moment, from one settings read while the
// cached entry is fresh.
func TestWidgetStatusCarriesTheClock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		gap  time.Duration
	}{
		{"at once", 0},
		{"half a second apart", 500 * time.Millisecond},
		{"just within the entry's life", widgetTTL - time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var counted *countingRooms
			h := newClockedHarness(t, func(o *Options) {
				counted = &countingRooms{widgetRoomsStore: o.Rooms}
				o.Rooms = counted
			})
			serverTime := func() int64 {
				var v struct {
					ServerTime int64 `json:"serverTime"`
				}
				r := h.do(t, "GET", "/r/"+h.room+"/widget/status", "", nil, nil)
				if err := json.Unmarshal([]byte(r.body), &v); err != nil || r.status != 200 {
					t.Fatalf("status %d %s: %v", r.status, r.body, err)
				}
				return v.ServerTime
			}
			before := counted.reads.Load()
			a := serverTime()
			h.clock.Advance(tc.gap)
			b := serverTime()
			if b-a != tc.gap.Milliseconds() {
				t.Fatalf("serverTimes %d and %d, want %v apart", a, b, tc.gap)
			}
			if n := counted.reads.Load() - before; n != 1 {
				t.Fatalf("%d settings reads, want 1", n)
			}
		})
	}
}
