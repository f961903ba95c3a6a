package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"
	"waitingroom/web/request"

	"github.com/jonboulle/clockwork"
	sseclient "github.com/r3labs/sse/v2"
	"github.com/redis/go-redis/v9"
	"waitingroom/server/issuer"
	"waitingroom/server/push"
	"waitingroom/server/queue"
	"waitingroom/server/redisconn"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/token"
	"waitingroom/server/visitor"
	"waitingroom/web/response"
	"waitingroom/web/sse"
)

// newHub returns a hub on src that counts into m.
func newHub(src sse.Source, opt sse.Options, m *Metrics, log *slog.Logger) *sse.Hub {
	opt.Source, opt.Metrics, opt.Log = src, m.Hub(), log
	return sse.NewHub(opt)
}

// instance is one full server (HTTP, hub, subscription and optionally an
// issuer) on real Redis, as a process would run it.
type instance struct {
	url string
	hub *sse.Hub
}

func startInstance(t *testing.T, rdb redis.UniversalClient, eng *queue.Engine, roomName string, tick time.Duration, withIssuer bool, hubOpt sse.Options) *instance {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	metrics := NewMetrics()
	hub := newHub(eng, hubOpt, metrics, log)
	signer := testSigner(t)
	s, err := New(Options{Queue: eng, Rooms: eng, Orders: embeddedOrders(t, eng, log), Signer: signer, Hub: hub, Metrics: metrics, Log: log,
		Health:         func(ctx context.Context) error { return rdb.Ping(ctx).Err() },
		Static:         fstest.MapFS{"app.js": {Data: []byte("//")}, "app.css": {Data: []byte("/**/")}},
		EnterRatePerIP: 10000, EnterBurstPerIP: 10000})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	subscribed := make(chan struct{})
	var l *issuer.Loop
	if withIssuer {
		l = issuer.New(oneRoom{eng, roomName}, tick, log, metrics)
	}
	wg.Go(func() { push.Listen(ctx, rdb, eng.Namespace(), notify{hub, subscribed, l}, log) })
	select {
	case <-subscribed:
	case <-time.After(5 * time.Second):
		t.Fatal("subscription not established")
	}
	if withIssuer {
		wg.Go(func() { l.Run(ctx) })
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		cancel()
		srv.Close()
		hub.Close()
		wg.Wait()
	})
	return &instance{url: srv.URL, hub: hub}
}

// notify is the hub's subscription, as the server wires it (app's
// listener): the wakes go to the issuer, if any; ch is closed once
// subscribed.
type notify struct {
	*sse.Hub
	ch     chan struct{}
	issuer *issuer.Loop
}

func (n notify) Lost() { n.Hub.Lost() }

func (n notify) Woken(room string) {
	if n.issuer != nil {
		n.issuer.Wake(room)
	}
}

func (n notify) Subscribed() {
	if n.issuer != nil {
		n.issuer.WakeAll()
	}
	n.Hub.Subscribed()
	select {
	case <-n.ch:
	default:
		close(n.ch)
	}
}

type oneRoom struct {
	*queue.Engine
	name string
}

func (o oneRoom) Rooms(context.Context) ([]string, error) { return []string{o.name}, nil }

// sseClient follows one visitor's stream with the r3labs client.
type sseClient struct {
	events chan *sseclient.Event
	cancel context.CancelFunc
	client *sseclient.Client
}

func follow(t *testing.T, url string, jar http.CookieJar, lastID string) *sseClient {
	t.Helper()
	c := sseclient.NewClient(url)
	c.Connection = &http.Client{Jar: jar}
	if lastID != "" {
		c.LastEventID.Store([]byte(lastID))
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan *sseclient.Event, 256)
	go c.SubscribeRawWithContext(ctx, func(e *sseclient.Event) {
		cp := &sseclient.Event{ID: append([]byte(nil), e.ID...), Event: append([]byte(nil), e.Event...), Data: append([]byte(nil), e.Data...)}
		select {
		case ch <- cp:
		default:
		}
	})
	t.Cleanup(cancel)
	return &sseClient{events: ch, cancel: cancel, client: c}
}

// eventWait bounds the wait for an event that must come. It is a bound for
// a loaded two-core CI machine (the race detector, the root package's
// browsers alongside), not a latency target: push latency is measured in
// BENCHMARKS.md. An event that never comes still fails the test.
const eventWait = 15 * time.Second

// next returns the next event that carries data (a block holding only
// "retry:" carries none) other than a beat, which only says the stream
// lives.
func (s *sseClient) next(t *testing.T, within time.Duration) *sseclient.Event {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case e := <-s.events:
			if len(e.Data) > 0 && string(e.Event) != "beat" {
				return e
			}
		case <-timeout:
			t.Fatalf("no SSE event within %v", within)
			return nil
		}
	}
}

func field(t *testing.T, e *sseclient.Event, name string) string {
	t.Helper()
	s := string(e.Data)
	i := strings.Index(s, `"`+name+`":`)
	if i < 0 {
		t.Fatalf("event %s has no %q", s, name)
	}
	v := s[i+len(name)+3:]
	end := strings.IndexAny(v, ",}")
	return strings.Trim(v[:end], `"`)
}

// TestReadyReachesAnotherInstance connects a visitor to instance A, which
// runs no issuer, and lets instance B admit them. The ready event, with the
// token, must arrive on A after B's admission, with the rank at 0 before
// it. How long it takes is logged: a figure of the push benchmarks, not a
// bound of this test.
func TestReadyReachesAnotherInstance(t *testing.T) {
	t.Parallel()
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Rate = 1
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	const tick = 500 * time.Millisecond
	a := startInstance(t, rdb, eng, name, tick, false, sse.Options{})

	jar, _ := cookiejar.New(nil)
	others, _ := cookiejar.New(nil)
	// Someone is ahead, so the visitor watches a position change first.
	if resp, err := (&http.Client{Jar: others}).Post(a.url+"/api/rooms/"+name+"/queue", "", nil); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	c := follow(t, a.url+"/r/"+name+"/events", jar, "")
	first := c.next(t, eventWait)
	if string(first.Event) != "position" || field(t, first, "rank") != "1" {
		t.Fatalf("first event %s %s, want position rank 1", first.Event, first.Data)
	}
	sub := rdb.Subscribe(context.Background(), queue.EventsChannel(eng.Namespace(), name))
	defer sub.Close()
	sub.Receive(context.Background())
	startInstance(t, rdb, eng, name, tick, true, sse.Options{}) // B: the issuer

	admitted := make(chan time.Time, 1)
	me := visitorOf(t, jar, a.url)
	go func() {
		for m := range sub.Channel() {
			if e, err := queue.ParseEvent([]byte(m.Payload)); err == nil && len(e.Admitted) > 0 && strings.Contains(m.Payload, me) {
				admitted <- time.Now()
				return
			}
		}
	}()
	sawRank0 := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		e := c.next(t, eventWait)
		switch string(e.Event) {
		case "position":
			if field(t, e, "rank") == "0" {
				sawRank0 = true
			}
			if field(t, e, "entryToken") != "null" {
				t.Fatalf("a position event carried a token: %s", e.Data)
			}
		case "ready":
			got := time.Now()
			tok := field(t, e, "entryToken")
			if len(tok) != 43 {
				t.Fatalf("ready without a token: %s", e.Data)
			}
			if !sawRank0 {
				t.Fatal("the rank never reached 0 before ready")
			}
			select {
			case at := <-admitted:
				t.Logf("ready arrived %v after the admitting tick (a tick is %v)", got.Sub(at).Round(time.Millisecond), tick)
			case <-time.After(eventWait):
				t.Fatal("the admission tick was not seen on the channel")
			}
			return
		}
	}
	t.Fatal("no ready event within 30 s")
}

func visitorOf(t *testing.T, jar http.CookieJar, base string) string {
	t.Helper()
	u, _ := http.NewRequest("GET", base, nil)
	for _, c := range jar.Cookies(u.URL) {
		if c.Name == request.CookieName {
			id, _, _ := strings.Cut(c.Value, ".")
			return id
		}
	}
	t.Fatal("no visitor cookie")
	return ""
}

// TestReconnectGetsCurrentPositionAtOnce drops a stream, lets the line move,
// and reconnects (with Last-Event-ID, as EventSource does): the first event
// is the current, lower position, without waiting for a tick.
func TestReconnectGetsCurrentPositionAtOnce(t *testing.T) {
	t.Parallel()
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	clock := clockwork.NewFakeClockAt(time.Now()) // the admission's credit accrues as the test moves it
	eng.SetClock(clock.Now)
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Rate = 1000
	set.Paused = true
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	a := startInstance(t, rdb, eng, name, time.Hour, false, sse.Options{})
	b := startInstance(t, rdb, eng, name, time.Hour, false, sse.Options{})
	ahead, _ := cookiejar.New(nil)
	for range 3 {
		jar, _ := cookiejar.New(nil)
		resp, err := (&http.Client{Jar: jar}).Post(a.url+"/api/rooms/"+name+"/queue", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ahead = jar
	}
	_ = ahead
	jar, _ := cookiejar.New(nil)
	c := follow(t, a.url+"/r/"+name+"/events", jar, "")
	e := c.next(t, eventWait)
	if field(t, e, "rank") != "3" {
		t.Fatalf("first rank %s, want 3", field(t, e, "rank"))
	}
	c.cancel()

	// Two people ahead are admitted while the visitor is away.
	set.Paused = false
	eng.SaveRoom(context.Background(), name, set)
	eng.Admit(context.Background(), name, time.Second, nil)
	clock.Advance(10 * time.Millisecond)
	for _, tok := range []string{strings.Repeat("A", 43), strings.Repeat("B", 42) + "A"} {
		if a, err := eng.Admit(context.Background(), name, time.Millisecond, []string{tok}); err != nil || len(a.Visitors) != 1 {
			t.Fatalf("admit: %+v %v", a, err)
		}
	}

	// The instances have no issuer and an hour's tick: the first event is
	// the reconnect's own.
	c2 := follow(t, b.url+"/r/"+name+"/events", jar, string(e.ID)) // to the other instance
	e2 := c2.next(t, eventWait)
	if string(e2.Event) != "position" || field(t, e2, "rank") != "1" {
		t.Fatalf("after reconnect: %s %s, want position rank 1", e2.Event, e2.Data)
	}
}

func TestPerIPCaps(t *testing.T) {
	t.Parallel()
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	if err := eng.SaveRoom(context.Background(), name, room.Defaults(name)); err != nil {
		t.Fatal(err)
	}
	inst := startInstance(t, rdb, eng, name, time.Hour, false, sse.Options{MaxPerIP: 2})
	var streams []*http.Response
	defer func() {
		for _, r := range streams {
			r.Body.Close()
		}
	}()
	for i := range 3 {
		resp, err := http.Get(inst.url + "/r/" + name + "/events")
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Accel-Buffering") != "no" {
				t.Fatalf("stream %d: %d %v", i, resp.StatusCode, resp.Header)
			}
			streams = append(streams, resp)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "too_many_connections") {
			t.Fatalf("third stream from one IP: %d %s", resp.StatusCode, body)
		}
	}
	// A stream its client closes frees its slot at once, though the hub
	// writes nothing to it (no tick, no heartbeat within the hour).
	streams[0].Body.Close()
	streams = streams[1:]
	start := time.Now()
	for {
		resp, err := http.Get(inst.url + "/r/" + name + "/events")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == 200 {
			streams = append(streams, resp)
			break
		}
		resp.Body.Close()
		if time.Since(start) > time.Second {
			t.Fatalf("a closed stream's slot did not come back within 1 s: %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSoldOutReachesWaitingVisitors flags a room sold out: a visitor
// waiting on the stream gets a soldout event at the next tick (still
// WAITING: they keep their place), and a new connection gets it at once.
func TestSoldOutReachesWaitingVisitors(t *testing.T) {
	t.Parallel()
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Paused = true
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	a := startInstance(t, rdb, eng, name, 100*time.Millisecond, true, sse.Options{})
	jar, _ := cookiejar.New(nil)
	c := follow(t, a.url+"/r/"+name+"/events", jar, "")
	if e := c.next(t, eventWait); string(e.Event) != "position" {
		t.Fatalf("first event %s", e.Event)
	}
	if err := eng.SetSoldOut(context.Background(), name, true); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(eventWait); ; {
		e := c.next(t, time.Until(deadline))
		if string(e.Event) == "soldout" {
			if field(t, e, "soldOut") != "true" || field(t, e, "status") != "WAITING" {
				t.Fatalf("soldout event %s", e.Data)
			}
			break
		}
	}
	jar2, _ := cookiejar.New(nil)
	c2 := follow(t, a.url+"/r/"+name+"/events", jar2, "")
	if e := c2.next(t, eventWait); string(e.Event) != "soldout" {
		t.Fatalf("a new connection to a sold-out room got %s %s", e.Event, e.Data)
	}
}

// TestRoomStartedAgainIsFollowed: a room deleted and created again (as
// after Redis lost its data and the room was restored) counts its ticks and
// tickets from the start. A page connected to the new room must get its
// true rank and then every tick's update, not the old room's frozen state.
func TestRoomStartedAgainIsFollowed(t *testing.T) {
	t.Parallel()
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Rate = 1
	ctx := context.Background()
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	a := startInstance(t, rdb, eng, name, 50*time.Millisecond, true, sse.Options{})
	jar, _ := cookiejar.New(nil)
	old := follow(t, a.url+"/r/"+name+"/events", jar, "")
	old.next(t, eventWait)
	var oldTick int64
	for deadline := time.Now().Add(eventWait); ; { // let the old room tick a while
		if st, _ := eng.Stats(ctx, name); st.Tick >= 60 {
			oldTick = st.Tick
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the room did not tick")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := eng.DeleteRoom(ctx, name); err != nil {
		t.Fatal(err)
	}
	set.Paused = true // nobody is admitted: ranks stay put
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		v, _ := visitor.NewID()
		if _, err := eng.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	jar2, _ := cookiejar.New(nil)
	c := follow(t, a.url+"/r/"+name+"/events", jar2, "")
	// Until the new room's first tick reaches this instance, the hub cannot
	// tell it from the old one; from then on the page must be told its true
	// rank at every tick (before the fix: the old room's head and tick,
	// then silence until the new room's tick passed the old one). The
	// page settles while the new room's ticks (the events' ids) are still
	// below the old room's last: counted in ticks, not seconds, so that a
	// loaded machine's slow ticks neither fail the fix nor pass the bug.
	settled := 0
	for deadline := time.Now().Add(eventWait); settled < 5; {
		e := c.next(t, time.Until(deadline))
		if string(e.Event) != "position" {
			continue
		}
		switch r := field(t, e, "rank"); {
		case r == "5":
			settled++
			if id, _ := strconv.ParseInt(string(e.ID), 10, 64); id >= oldTick {
				t.Fatalf("the page was told its rank at the new room's tick %d, past the old room's %d: it was not followed from the new room's first tick", id, oldTick)
			}
		case settled > 0:
			t.Fatalf("after settling, the sixth in the new room's line was told rank %s: %s", r, e.Data)
		}
	}
}

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
// sse.MaxStreamsPerVisitor of them; each stream past the cap closes the
// visitor's oldest one, and the newest ones stay open.
func TestStreamsPerVisitor(t *testing.T) {
	t.Parallel()
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
		if i < sse.MaxStreamsPerVisitor {
			waitFor(t, func() bool { return h.web.hub.Connections() == int64(i+1) })
			continue
		}
		select {
		case <-ended[i-sse.MaxStreamsPerVisitor]:
		case <-time.After(5 * time.Second):
			t.Fatalf("stream %d did not close the visitor's oldest stream (%d)", i+1, i-sse.MaxStreamsPerVisitor+1)
		}
	}
	// The evicted streams are closed, then forgotten. A stream closes only
	// when a later one evicts it, and none comes after the sixth: with the
	// oldest ones seen closed above, this count is the newest ones open.
	waitFor(t, func() bool { return h.web.hub.Connections() == sse.MaxStreamsPerVisitor })
	for i, end := range ended[6-sse.MaxStreamsPerVisitor:] {
		select {
		case <-end:
			t.Fatalf("stream %d (one of the newest) was closed", 6-sse.MaxStreamsPerVisitor+i+1)
		default:
		}
	}
}

// TestStreamsProcessCap: past sse.Options.MaxStreams, a buyer's connect is
// answered 503 JSON with Retry-After; a refused connect holds no slot.
func TestStreamsProcessCap(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) {
		o.Hub = newHub(o.Queue.(sse.Source), sse.Options{MaxStreams: 2}, o.Metrics, o.Log)
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
	if n := h.web.hub.Streams(); n != 2 {
		t.Fatalf("%d stream slots counted, want 2", n)
	}
}

// TestStreamThatMakesAPlaceIsAnEnter: in a room without a challenge, a
// known visitor's stream that makes a place takes an enter from the
// address's limit: with it spent, leave + stream cycles with one cookie
// make no new place (429).
func TestStreamThatMakesAPlaceIsAnEnter(t *testing.T) {
	t.Parallel()
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

// heard is one event a buyer's stream carried.
type heard struct {
	buyer       int
	name, data  string
	soldOutFlag bool
}

// listen follows buyer i's stream into all, as it comes.
func listen(t *testing.T, i int, c *sseClient, all chan<- heard) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case e := <-c.events:
				if len(e.Data) == 0 {
					continue
				}
				all <- heard{buyer: i, name: string(e.Event), data: string(e.Data),
					soldOutFlag: strings.Contains(string(e.Data), `"soldOut":true`)}
			}
		}
	}()
}

// TestRestockAdmitsOnlyWhoHearsIt: 30 buyers on open streams, three
// admitted (maxActive 3 holds the admissions to the stock of 3), then the
// room sells out: each of the 27 waiting hears soldout and keeps its
// place and its stream. The restock (stock 5: maxActive 5 and the flag
// cleared) admits the next two: every buyer admitted, by the API, has
// heard its ready event on its stream, the rest hear that the line moves
// again, and a buyer who joins after the restock is behind all of them.
func TestRestockAdmitsOnlyWhoHearsIt(t *testing.T) {
	t.Parallel()
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	ctx := context.Background()
	set := room.Defaults(name)
	set.Rate, set.MaxActive, set.Paused = 1000, 3, true // paused while the 30 join, in order
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	const tick = 50 * time.Millisecond
	a := startInstance(t, rdb, eng, name, tick, true, sse.Options{Tick: tick})

	const buyers = 30
	all := make(chan heard, 100000)
	jars := make([]http.CookieJar, buyers)
	for i := range buyers {
		jars[i], _ = cookiejar.New(nil)
		c := follow(t, a.url+"/r/"+name+"/events", jars[i], "")
		if e := c.next(t, eventWait); string(e.Event) != "position" || field(t, e, "rank") != fmt.Sprint(i) {
			t.Fatalf("buyer %d joined with %s %s", i, e.Event, e.Data)
		}
		listen(t, i, c, all)
	}

	ready := make([]int, buyers)
	soldOut := make([]int, buyers)
	movesAgain := make([]bool, buyers)
	// until reads the buyers' events until done holds.
	until := func(what string, done func() bool) {
		t.Helper()
		timeout := time.After(eventWait)
		for !done() {
			select {
			case h := <-all:
				switch {
				case h.name == "ready":
					ready[h.buyer]++
				case h.name == "soldout":
					soldOut[h.buyer]++
				case h.name == "position" && !h.soldOutFlag && soldOut[h.buyer] > 0:
					movesAgain[h.buyer] = true
				}
			case <-timeout:
				t.Fatalf("%s: not within %v (ready %v, soldout %v, moving again %v)", what, eventWait, ready, soldOut, movesAgain)
			}
		}
	}
	count := func(n []int, from, to int) (c int) {
		for _, v := range n[from:to] {
			c += min(v, 1)
		}
		return c
	}

	set.Paused = false
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	until("the first 3 hear ready", func() bool { return count(ready, 0, 3) == 3 })

	if err := eng.SetSoldOut(ctx, name, true); err != nil {
		t.Fatal(err)
	}
	until("the 27 waiting hear soldout", func() bool { return count(soldOut, 3, buyers) == buyers-3 })

	set.MaxActive = 5
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	if err := eng.SetSoldOut(ctx, name, false); err != nil {
		t.Fatal(err)
	}
	until("the next 2 hear ready, the other 25 that the line moves", func() bool {
		n := 0
		for _, m := range movesAgain[5:] {
			if m {
				n++
			}
		}
		return count(ready, 3, 5) == 2 && n == buyers-5
	})

	// Admitted by the API == ready events heard, buyer by buyer.
	admitted := 0
	for i := range buyers {
		resp, err := (&http.Client{Jar: jars[i]}).Get(a.url + "/api/rooms/" + name + "/queue/position")
		if err != nil {
			t.Fatal(err)
		}
		var p queue.Position
		err = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		isReady := p.Status == queue.StatusReady
		if isReady {
			admitted++
		}
		if isReady != (ready[i] > 0) || ready[i] > 1 {
			t.Errorf("buyer %d: %s by the API, %d ready events heard", i, p.Status, ready[i])
		}
	}
	if admitted != 5 {
		t.Fatalf("%d admitted, want 5 (the stock)", admitted)
	}

	// A buyer who comes after the restock waits behind the 25.
	late, _ := cookiejar.New(nil)
	c := follow(t, a.url+"/r/"+name+"/events", late, "")
	if e := c.next(t, eventWait); string(e.Event) != "position" || field(t, e, "status") != "WAITING" || field(t, e, "rank") != fmt.Sprint(buyers-5) {
		t.Fatalf("a buyer after the restock: %s %s, want rank %d", e.Event, e.Data, buyers-5)
	}
}

// TestStreamEntersOnlyFromTheRoomsOwnPages plays another site that points
// an <img> or an EventSource at a room's stream (challenge off): the
// stream makes a place and sets the cookie only for the room's own pages,
// a typed address and clients that are no browser. Another site's request
// is refused with 403 cross_site and no cookie, unless the visitor
// already has a place, which it then only follows. The widget's stream,
// which takes no place, still serves an embed origin.
func TestStreamEntersOnlyFromTheRoomsOwnPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.AllowedOrigins = []string{"https://shop.example"} })
	h.setRoom(t, func(s *room.Settings) {
		s.Challenge = room.ChallengeOff
		s.EmbedOrigins = []string{"https://blog.example"}
	})
	own := h.srv.URL + "/r/" + h.room
	open := func(t *testing.T, path string, hdr map[string]string, c *http.Cookie) *http.Response {
		t.Helper()
		resp, _ := openStreamAt(t, h, path, hdr, c)
		return resp
	}
	events := "/r/" + h.room + "/events"
	tests := []struct {
		name   string
		hdr    map[string]string
		enters bool
	}{
		{"the room's page", map[string]string{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Referer": own}, true},
		{"typed in the address bar", map[string]string{"Sec-Fetch-Site": "none"}, true},
		{"no browser at all", nil, true},
		{"old browser, the room's page", map[string]string{"Referer": own}, true},
		{"an ALLOWED_ORIGINS origin", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://shop.example"}, true},
		{"another site's <img>", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}, false},
		{"another site's <img> with its Referer", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "image", "Referer": "https://evil.example/"}, false},
		{"another site's EventSource", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors", "Origin": "https://evil.example"}, false},
		{"a sibling site's EventSource", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "https://shop.evil.example"}, false},
		{"an embed origin's EventSource", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://blog.example"}, false},
		{"old browser, another site's EventSource", map[string]string{"Origin": "https://evil.example"}, false},
		{"old browser, another site's <img>", map[string]string{"Referer": "https://evil.example/page"}, false},
		{"a sandboxed frame", map[string]string{"Origin": "null"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := h.places(t)
			resp := open(t, events, tt.hdr, nil)
			cookie := (&reply{header: resp.Header}).cookie()
			grew := h.places(t) > before
			if grew != tt.enters || (cookie != nil) != tt.enters {
				t.Fatalf("%d: places grew %v, Set-Cookie %v; want both %v", resp.StatusCode, grew, cookie != nil, tt.enters)
			}
			if want := map[bool]int{true: 200, false: 403}[tt.enters]; resp.StatusCode != want {
				t.Fatalf("status %d, want %d", resp.StatusCode, want)
			}
			if !tt.enters {
				var e response.Error
				if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Code != "cross_site" {
					t.Fatalf("refused with %+v (%v), want the JSON error cross_site", e, err)
				}
			}
		})
	}

	t.Run("another site's stream follows a place the visitor has", func(t *testing.T) {
		c := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil).cookie()
		before := h.places(t)
		resp := open(t, events, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, c)
		if resp.StatusCode != 200 || len(resp.Header.Values("Set-Cookie")) != 0 || h.places(t) != before {
			t.Fatalf("%d, Set-Cookie %q, places %d → %d; want 200, no cookie, no new place",
				resp.StatusCode, resp.Header.Values("Set-Cookie"), before, h.places(t))
		}
	})
	t.Run("the widget's stream serves an embed origin", func(t *testing.T) {
		before := h.places(t)
		resp := open(t, "/r/"+h.room+"/widget/events", map[string]string{"Sec-Fetch-Site": "same-origin", "Referer": own + "/widget"}, nil)
		if resp.StatusCode != 200 || len(resp.Header.Values("Set-Cookie")) != 0 || h.places(t) != before {
			t.Fatalf("%d, Set-Cookie %q: want 200 without a cookie or a place", resp.StatusCode, resp.Header.Values("Set-Cookie"))
		}
	})
}

// seenAgo rewrites when the holder of ticket was last seen, as the queue
// scripts store it (2 s epochs, 2 bytes per ticket), so that the test need
// not wait out abandonAfterSeconds.
func seenAgo(t *testing.T, eng *queue.Engine, name string, ticket int64, ago time.Duration) {
	t.Helper()
	rdb := servicetest.Redis(t)
	v := (time.Now().Add(-ago).UnixMicro()/2000000)%65535 + 1
	if err := rdb.SetRange(context.Background(), eng.Namespace()+":{"+name+"}:seen", 2*ticket, string([]byte{byte(v >> 8), byte(v)})).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestAwayBuyerLetInOverSSE drives the absence rule through the SSE path:
// while paused the stream says so with no ETA; a buyer whose page has been
// gone 3 minutes when their turn comes is passed over, reconnects, and gets
// the ready event at the next tick, while the rank of the buyer behind
// never goes up.
func TestAwayBuyerLetInOverSSE(t *testing.T) {
	t.Parallel()
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Rate, set.AbandonAfterSeconds, set.Paused = 1000, 60, true
	ctx := context.Background()
	// The engine decides by a clock the ticks below move.
	start, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClockAt(start)
	eng.SetClock(clock.Now)
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	a := startInstance(t, rdb, eng, name, time.Hour, false, sse.Options{})
	enter := func() http.CookieJar {
		jar, _ := cookiejar.New(nil)
		resp, err := (&http.Client{Jar: jar}).Post(a.url+"/api/rooms/"+name+"/queue", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return jar
	}
	away := enter() // ticket 1
	enter()         // ticket 2
	jar, _ := cookiejar.New(nil)
	me := follow(t, a.url+"/r/"+name+"/events", jar, "") // ticket 3
	e := me.next(t, eventWait)
	if field(t, e, "rank") != "2" || field(t, e, "paused") != "true" || field(t, e, "estimatedWaitSeconds") != "null" {
		t.Fatalf("first event while paused: %s, want rank 2, paused, no ETA", e.Data)
	}
	lastRank := 2

	seenAgo(t, eng, name, 1, 3*time.Minute)
	set.Paused = false
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	tick := func() queue.Admission {
		t.Helper()
		eng.Admit(ctx, name, time.Second, nil) // the rate clock starts
		clock.Advance(20 * time.Millisecond)
		toks, _ := token.NewBatch(1)
		adm, err := eng.Admit(ctx, name, 10*time.Millisecond, toks)
		if err != nil {
			t.Fatal(err)
		}
		return adm
	}
	// myRank reads my stream until a position at or past tick n.
	myRank := func(n int64) {
		t.Helper()
		for {
			e := me.next(t, eventWait)
			if string(e.Event) != "position" {
				t.Fatalf("event %s %s, want a position", e.Event, e.Data)
			}
			r, _ := strconv.Atoi(field(t, e, "rank"))
			if r > lastRank {
				t.Fatalf("my rank went up from %d to %d: %s", lastRank, r, e.Data)
			}
			lastRank = r
			if id, _ := strconv.ParseInt(string(e.ID), 10, 64); id >= n {
				if field(t, e, "paused") != "false" || field(t, e, "estimatedWaitSeconds") == "null" {
					t.Fatalf("event %s after the pause: want paused false and an ETA", e.Data)
				}
				return
			}
		}
	}
	adm := tick()
	if len(adm.Visitors) != 1 || adm.Waiting != 1 {
		t.Fatalf("tick %+v: want the second admitted, the first passed over, me waiting", adm)
	}
	myRank(adm.Tick)
	if lastRank != 0 {
		t.Fatalf("my rank is %d after the two ahead went, want 0", lastRank)
	}

	// The away buyer's page comes back: the stream enters (idempotent) and
	// the next tick lets them in, ahead of me, with a visible deadline.
	back := follow(t, a.url+"/r/"+name+"/events", away, "")
	if e := back.next(t, eventWait); string(e.Event) != "position" || field(t, e, "status") != "WAITING" || field(t, e, "ticket") != "1" {
		t.Fatalf("the returning page is told %s %s, want WAITING with ticket 1", e.Event, e.Data)
	}
	adm = tick()
	if len(adm.Visitors) != 1 || adm.Waiting != 1 {
		t.Fatalf("tick %+v: want the returning buyer admitted, me still waiting", adm)
	}
	for {
		e := back.next(t, eventWait)
		if string(e.Event) != "ready" {
			continue
		}
		exp, _ := strconv.ParseInt(field(t, e, "passExpiresAt"), 10, 64)
		if d := time.UnixMilli(exp).Sub(clock.Now()); d <= 299*time.Second || d > 300*time.Second {
			t.Fatalf("ready %s: passExpiresAt %v away, want the 300 s TTL", e.Data, d)
		}
		break
	}
	myRank(adm.Tick)
	if lastRank != 0 {
		t.Fatalf("my rank is %d after the returning buyer went in, want 0", lastRank)
	}
}

// rawStream is one stream's response, read block by block ("retry:"
// fields included, which an SSE client keeps to itself).
type rawStream struct {
	resp   *http.Response
	br     *bufio.Reader
	cancel context.CancelFunc
}

// dialStream connects to url as a page does, with lastID as Last-Event-ID
// when set.
func dialStream(t *testing.T, c *http.Client, url, lastID string) *rawStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*eventWait)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := c.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &rawStream{resp: resp, br: bufio.NewReader(resp.Body), cancel: cancel}
	t.Cleanup(s.close)
	return s
}

func (s *rawStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// block returns the stream's next block of fields; io.EOF when the
// response ended.
func (s *rawStream) block() (string, error) {
	var b strings.Builder
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			return b.String(), err
		}
		if line == "\n" {
			return b.String(), nil
		}
		b.WriteString(line)
	}
}

// expect returns the next block that names event name, skipping the
// others (retry fields, beats).
func (s *rawStream) expect(t *testing.T, name string) string {
	t.Helper()
	for {
		b, err := s.block()
		if err != nil {
			t.Fatalf("stream ended (%v) before an event %q", err, name)
		}
		if strings.Contains(b, "event: "+name+"\n") {
			return b
		}
	}
}

// TestStreamHeldThroughRedisRestart: a page whose stream broke while
// Redis was down reconnects during the outage. It is answered 200 with an
// outage event and held, not refused: an EventSource gives up on a
// refusal, and its page would come back seconds after Redis. Redis comes
// back while the client still refuses (after a run of failed dials it
// answers its last dial error until its probe, once a second, connects):
// the held stream ends with a short retry only once Redis answers, and
// the reconnect gets the page's position.
func TestStreamHeldThroughRedisRestart(t *testing.T) {
	rs := servicetest.StartRedisServer(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	conn, err := redisconn.Open(ctx, rs.URL(), redisconn.Sentinel{}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rdb := conn.Client
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := "held"
	set := room.Defaults(name)
	set.Paused = true
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	in := startInstance(t, rdb, eng, name, time.Hour, false, sse.Options{})
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	url := in.url + "/r/" + name + "/events"
	first := dialStream(t, c, url, "")
	pos := first.expect(t, "position")
	rs.WaitAOFWritten() // the enter survives the crash

	rs.Crash()
	first.expect(t, "outage")
	first.close() // the page's network drops
	// The instance's work during the outage trips the client's dial
	// breaker, as an instance's loops do.
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() { rdb.Ping(ctx) })
	}
	wg.Wait()

	held := dialStream(t, c, url, "")
	if held.resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(held.resp.Body)
		t.Fatalf("a stream during the outage: %s %s, want 200 and an outage event", held.resp.Status, b)
	}
	held.expect(t, "outage")
	rs.Start()
	stale := rdb.Ping(ctx).Err()
	var retry string
	for {
		b, err := held.block()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("held stream: %v", err)
		}
		if v, ok := strings.CutPrefix(b, "retry: "); ok {
			retry = strings.TrimSpace(v)
		}
	}
	ms, _ := strconv.Atoi(retry)
	if ms <= 0 || ms > 1250 {
		t.Fatalf("the held stream ended with retry %q, want a short one (at most 1250 ms)", retry)
	}
	back := dialStream(t, c, url, "")
	again := back.expect(t, "position")
	ticket := func(b string) string {
		i := strings.Index(b, `"ticket":`)
		return b[i : i+strings.IndexByte(b[i:], ',')]
	}
	if !strings.Contains(again, `"status":"WAITING"`) || ticket(again) != ticket(pos) {
		t.Fatalf("after Redis' return: %q, want the place of %q", again, pos)
	}
	t.Logf("the Redis client's first answer after the restart: %v; the held stream ended with retry %d ms", stale, ms)
}
