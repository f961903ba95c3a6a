package web

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/r3labs/sse/v2"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/issuer"
	"waitingroom/server/push"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/visitor"
)

// fakeSource answers the hub without Redis.
type fakeSource struct {
	snap queue.Snapshot
	pos  func(visitor string) queue.Position
	seen atomic.Int64
}

func (f *fakeSource) Snapshot(context.Context, string) (queue.Snapshot, error) { return f.snap, nil }
func (f *fakeSource) Position(_ context.Context, _, v string) (queue.Position, error) {
	return f.pos(v), nil
}
func (f *fakeSource) MarkSeen(_ context.Context, _ string, t []int64) error {
	f.seen.Add(int64(len(t)))
	return nil
}

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t testing.TB) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

// TestFanOutNeverBlocksOnAStuckClient attaches one client that never reads
// (with tiny socket buffers) beside healthy ones, then drives hundreds of
// ticks. The stuck client must be dropped, every event must reach the
// healthy clients, and Event must never wait.
func TestFanOutNeverBlocksOnAStuckClient(t *testing.T) {
	src := &fakeSource{snap: queue.Snapshot{Tick: 1, Head: 0, Waiting: 1000, Rate: 50}}
	metrics := NewMetrics()
	hub := NewHub(src, HubOptions{MaxPerIP: 100, SeenEvery: time.Hour}, metrics, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer hub.Close()
	r, err := hub.room(context.Background(), "stuck")
	if err != nil {
		t.Fatal(err)
	}

	srv, stuck := tcpPair(t)
	srv.(*net.TCPConn).SetWriteBuffer(4096)
	stuck.(*net.TCPConn).SetReadBuffer(4096)
	sc := newSSEConn(srv)
	sc.ip = "stuck"
	hub.acquireIP("stuck")
	hub.attach(r, sc, queue.Position{Status: queue.StatusWaiting, Ticket: 50, Rank: 49, Tick: 1}) // at the front: every tick

	const healthy, ticks = 5, 400
	var got [healthy]atomic.Int64
	var readers sync.WaitGroup
	for i := range healthy {
		srv, cli := tcpPair(t)
		c := newSSEConn(srv)
		c.ip = "ok"
		hub.acquireIP("ok")
		// At the front (CADENCE): they hear every tick.
		hub.attach(r, c, queue.Position{Status: queue.StatusWaiting, Ticket: int64(100 + i), Rank: 99, Tick: 1})
		readers.Go(func() {
			sc := bufio.NewScanner(cli)
			for sc.Scan() {
				if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
					n, _ := strconv.ParseInt(id, 10, 64)
					got[i].Store(n)
				}
			}
		})
	}

	var slowest time.Duration
	for tick := int64(2); tick <= ticks; tick++ {
		start := time.Now()
		hub.Event("stuck", queue.Event{Tick: tick, Head: 0, Waiting: 1000, Rate: 50})
		slowest = max(slowest, time.Since(start))
		time.Sleep(200 * time.Microsecond)
	}
	if slowest > 50*time.Millisecond {
		t.Fatalf("Event blocked for %v", slowest)
	}
	deadline := time.Now().Add(5 * time.Second)
	for i := range healthy {
		for got[i].Load() != ticks && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got[i].Load() != ticks {
			t.Fatalf("healthy client %d saw up to tick %d of %d", i, got[i].Load(), ticks)
		}
	}
	if n := testutil.ToFloat64(metrics.SSESlowDrops); n != 1 {
		t.Fatalf("%v slow clients dropped, want exactly the stuck one", n)
	}
	if n := testutil.ToFloat64(metrics.SSEConnections); n != healthy {
		t.Fatalf("%v connections left, want %d", n, healthy)
	}
}

// instance is one full server (HTTP, hub, subscription and optionally an
// issuer) on real Redis, as a process would run it.
type instance struct {
	url string
	hub *Hub
}

func startInstance(t *testing.T, rdb redis.UniversalClient, eng *queue.Engine, roomName string, tick time.Duration, withIssuer bool, hubOpt HubOptions) *instance {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	metrics := NewMetrics()
	hub := NewHub(eng, hubOpt, metrics, log)
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
	wg.Go(func() { push.Listen(ctx, rdb, eng.Namespace(), notify{hub, subscribed}, log) })
	select {
	case <-subscribed:
	case <-time.After(5 * time.Second):
		t.Fatal("subscription not established")
	}
	if withIssuer {
		l := issuer.New(oneRoom{eng, roomName}, tick, log, metrics)
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

type notify struct {
	*Hub
	ch chan struct{}
}

func (n notify) Lost() { n.Hub.Lost() }

func (n notify) Subscribed() {
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
	events chan *sse.Event
	cancel context.CancelFunc
	client *sse.Client
}

func follow(t *testing.T, url string, jar http.CookieJar, lastID string) *sseClient {
	t.Helper()
	c := sse.NewClient(url)
	c.Connection = &http.Client{Jar: jar}
	if lastID != "" {
		c.LastEventID.Store([]byte(lastID))
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan *sse.Event, 256)
	go c.SubscribeRawWithContext(ctx, func(e *sse.Event) {
		cp := &sse.Event{ID: append([]byte(nil), e.ID...), Event: append([]byte(nil), e.Event...), Data: append([]byte(nil), e.Data...)}
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
func (s *sseClient) next(t *testing.T, within time.Duration) *sse.Event {
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

func field(t *testing.T, e *sse.Event, name string) string {
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

// TestReadyReachesAnotherInstanceWithinATick connects a visitor to instance
// A, which runs no issuer, and lets instance B admit them. The ready event,
// with the token, must arrive on A within one tick of B's admission.
func TestReadyReachesAnotherInstanceWithinATick(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Rate = 1
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	const tick = 500 * time.Millisecond
	a := startInstance(t, rdb, eng, name, tick, false, HubOptions{})

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
	startInstance(t, rdb, eng, name, tick, true, HubOptions{}) // B: the issuer

	var admittedAt atomic.Int64 // unix nanoseconds
	me := visitorOf(t, jar, a.url)
	go func() {
		for m := range sub.Channel() {
			if e, err := queue.ParseEvent([]byte(m.Payload)); err == nil && len(e.Admitted) > 0 && strings.Contains(m.Payload, me) {
				admittedAt.Store(time.Now().UnixNano())
				return
			}
		}
	}()
	sawRank0 := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
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
			time.Sleep(50 * time.Millisecond)
			if admittedAt.Load() == 0 {
				t.Fatal("the admission tick was not seen on the channel")
			}
			if lag := got.Sub(time.Unix(0, admittedAt.Load())); lag > tick {
				t.Fatalf("ready arrived %v after the admitting tick, want within one tick (%v)", lag, tick)
			}
			return
		}
	}
	t.Fatal("no ready event within 10 s")
}

func visitorOf(t *testing.T, jar http.CookieJar, base string) string {
	t.Helper()
	u, _ := http.NewRequest("GET", base, nil)
	for _, c := range jar.Cookies(u.URL) {
		if c.Name == CookieName {
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
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Rate = 1000
	set.Paused = true
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	a := startInstance(t, rdb, eng, name, time.Hour, false, HubOptions{})
	b := startInstance(t, rdb, eng, name, time.Hour, false, HubOptions{})
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
	time.Sleep(10 * time.Millisecond)
	eng.Admit(context.Background(), name, time.Millisecond, []string{strings.Repeat("A", 43)})
	eng.Admit(context.Background(), name, time.Millisecond, []string{strings.Repeat("B", 42) + "A"})

	start := time.Now()
	c2 := follow(t, b.url+"/r/"+name+"/events", jar, string(e.ID)) // to the other instance
	e2 := c2.next(t, 2*time.Second)
	if took := time.Since(start); took > time.Second {
		t.Fatalf("the reconnect waited %v for its first event", took)
	}
	if string(e2.Event) != "position" || field(t, e2, "rank") != "1" {
		t.Fatalf("after reconnect: %s %s, want position rank 1", e2.Event, e2.Data)
	}
}

func TestPerIPCaps(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	if err := eng.SaveRoom(context.Background(), name, room.Defaults(name)); err != nil {
		t.Fatal(err)
	}
	inst := startInstance(t, rdb, eng, name, time.Hour, false, HubOptions{MaxPerIP: 2})
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

func TestAppendChunk(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		want    string
	}{
		{"empty", "", "0000\r\n\r\n"},
		{"short", "data: x\n\n", "0009\r\ndata: x\n\n\r\n"},
		{"255", strings.Repeat("a", 255), "00ff\r\n" + strings.Repeat("a", 255) + "\r\n"},
		{"too big for 4 digits", strings.Repeat("b", 1<<16), "10000\r\n" + strings.Repeat("b", 1<<16) + "\r\n"},
	}
	for _, tt := range tests {
		got := string(appendChunk([]byte("prefix"), func(b []byte) []byte { return append(b, tt.payload...) }))
		if got != "prefix"+tt.want {
			t.Errorf("%s: got %q", tt.name, got[:min(len(got), 40)])
		}
	}
}

// TestSoldOutReachesWaitingVisitors flags a room sold out: a visitor
// waiting on the stream gets a soldout event at the next tick (still
// WAITING: they keep their place), and a new connection gets it at once.
func TestSoldOutReachesWaitingVisitors(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Paused = true
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	a := startInstance(t, rdb, eng, name, 100*time.Millisecond, true, HubOptions{})
	jar, _ := cookiejar.New(nil)
	c := follow(t, a.url+"/r/"+name+"/events", jar, "")
	if e := c.next(t, eventWait); string(e.Event) != "position" {
		t.Fatalf("first event %s", e.Event)
	}
	if err := eng.SetSoldOut(context.Background(), name, true); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
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

// TestOutageIsToldToWaitingPages: when the subscription breaks, every
// waiting page gets an outage event (it shows "Reconnecting…").
func TestOutageIsToldToWaitingPages(t *testing.T) {
	src := &fakeSource{snap: queue.Snapshot{Tick: 1, Waiting: 2, Rate: 1}}
	hub := NewHub(src, HubOptions{}, NewMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer hub.Close()
	r, _ := hub.room(context.Background(), "outage")
	var clients []net.Conn
	for i := range 3 {
		srv, cli := tcpPair(t)
		c := newSSEConn(srv)
		hub.acquireIP("x")
		c.ip = "x"
		p := queue.Position{Status: queue.StatusWaiting, Ticket: int64(i + 5), Rank: int64(i), Tick: 1}
		if i == 2 {
			p.Status = queue.StatusReady // a page already let in is not bothered
		}
		hub.attach(r, c, p)
		clients = append(clients, cli)
	}
	hub.Lost()
	for i, cli := range clients {
		cli.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		b := make([]byte, 256)
		n, _ := cli.Read(b)
		got := strings.Contains(string(b[:n]), "event: outage")
		if got != (i < 2) {
			t.Fatalf("client %d: outage event %v, want %v (%q)", i, got, i < 2, b[:n])
		}
	}
}

// TestRoomStartedAgainIsFollowed: a room deleted and created again (as
// after Redis lost its data and the room was restored) counts its ticks and
// tickets from the start. A page connected to the new room must get its
// true rank and then every tick's update, not the old room's frozen state.
func TestRoomStartedAgainIsFollowed(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Rate = 1
	ctx := context.Background()
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	a := startInstance(t, rdb, eng, name, 50*time.Millisecond, true, HubOptions{})
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
	// rank at every tick, never the old room's head and tick, nor silence
	// until the new room's tick passes the old one. The
	// page settles while the new room's ticks (the events' ids) are still
	// below the old room's last: counted in ticks, not seconds, so that a
	// loaded machine's slow ticks neither fail a right hub nor pass a wrong one.
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

// TestFirstTickDuringHandshakeIsFollowed: a visitor whose position was read
// before the room's first tick (tick 0), while this process applied that
// tick before the connection was attached, must still be followed: told
// where they stand and, once admitted, sent the ready event (before the
// fix the hub took the room for one that started again and waited for a
// new epoch that never came: an open, silent stream).
func TestFirstTickDuringHandshakeIsFollowed(t *testing.T) {
	var admitted atomic.Bool
	tok := "tok"
	src := &fakeSource{snap: queue.Snapshot{Tick: 0, Head: 0, Waiting: 10, Rate: 1},
		pos: func(string) queue.Position {
			if admitted.Load() {
				return queue.Position{Status: queue.StatusReady, Ticket: 5, EntryToken: &tok, Tick: 3}
			}
			return queue.Position{Status: queue.StatusWaiting, Ticket: 5, Rank: 4, Tick: 1}
		}}
	hub := NewHub(src, HubOptions{SeenEvery: time.Hour}, NewMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer hub.Close()
	r, err := hub.room(context.Background(), "first")
	if err != nil {
		t.Fatal(err)
	}
	hub.Event("first", queue.Event{Tick: 1, Head: 0, Waiting: 10, Rate: 1}) // the first tick, mid-handshake
	srv, cli := tcpPair(t)
	c := newSSEConn(srv)
	c.ip, c.visitor = "x", "v"
	hub.acquireIP("x")
	hub.attach(r, c, queue.Position{Status: queue.StatusWaiting, Ticket: 5, Rank: 4, Tick: 0})

	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(cli)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(3 * time.Second)
	for tick := int64(2); ; tick++ {
		head := int64(0)
		if tick >= 4 {
			admitted.Store(true)
			head = 5
		}
		hub.Event("first", queue.Event{Tick: tick, Head: head, Waiting: 10, Rate: 1})
		wait := time.After(100 * time.Millisecond)
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("the stream closed without the ready event")
				}
				if l == "event: ready" {
					return
				}
			case <-wait:
				break read
			case <-deadline:
				t.Fatalf("no ready event by tick %d: the stream stayed silent", tick)
			}
		}
	}
}
