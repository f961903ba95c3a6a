package sse

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"waitingroom/server/queue"
)

// TestFanOutNeverBlocksOnAStuckClient attaches one client that never reads
// (with tiny socket buffers) beside healthy ones, then drives hundreds of
// ticks. The stuck client must be dropped, every event must reach the
// healthy clients, and Event must never wait.
func TestFanOutNeverBlocksOnAStuckClient(t *testing.T) {
	src := &fakeSource{snap: queue.Snapshot{Tick: 1, Head: 0, Waiting: 1000, Rate: 50}}
	metrics := newMetrics()
	hub := newHub(src, Options{MaxPerIP: 100, SeenEvery: time.Hour}, metrics, slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer hub.Close()
	r, err := hub.Room(context.Background(), "stuck")
	if err != nil {
		t.Fatal(err)
	}

	srv, stuck := tcpPair(t)
	srv.(*net.TCPConn).SetWriteBuffer(4096)
	stuck.(*net.TCPConn).SetReadBuffer(4096)
	sc := newConn(srv)
	sc.ip = "stuck"
	hub.acquireIP("stuck")
	hub.attach(r, sc, queue.Position{Status: queue.StatusWaiting, Ticket: 50, Rank: 49, Tick: 1}) // at the front: every tick

	const healthy, ticks = 5, 400
	var got [healthy]atomic.Int64
	var readers sync.WaitGroup
	for i := range healthy {
		srv, cli := tcpPair(t)
		c := newConn(srv)
		c.ip = "ok"
		hub.acquireIP("ok")
		// At the front: they hear every tick.
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
	if n := testutil.ToFloat64(metrics.SlowDrops); n != 1 {
		t.Fatalf("%v slow clients dropped, want exactly the stuck one", n)
	}
	if n := testutil.ToFloat64(metrics.Connections); n != healthy {
		t.Fatalf("%v connections left, want %d", n, healthy)
	}
}

// TestRankUpIsShownWithItsReason: a rank that goes up is no longer hidden
// by the hub; it comes with rankUpReason. Here the visitor came back after
// their place lapsed and holds a new ticket at the end. A paused tick
// carries paused and no ETA.
func TestRankUpIsShownWithItsReason(t *testing.T) {
	src := &fakeSource{snap: queue.Snapshot{Tick: 1, Head: 0, Waiting: 10, Rate: 1},
		pos: func(string) queue.Position { return queue.Position{Status: queue.StatusWaiting, Ticket: 10, Rank: 6} }}
	hub := newHub(src, Options{SeenEvery: time.Hour}, newMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer hub.Close()
	r, err := hub.Room(context.Background(), "up")
	if err != nil {
		t.Fatal(err)
	}
	srv, cli := tcpPair(t)
	c := newConn(srv)
	c.ip = "x"
	hub.acquireIP("x")
	hub.attach(r, c, queue.Position{Status: queue.StatusWaiting, Ticket: 3, Rank: 2, Tick: 1})
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(cli)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				lines <- d
			}
		}
	}()
	// The head passes ticket 3: the hub asks, and learns of ticket 10.
	tick := int64(2)
	var got string
	for deadline := time.Now().Add(5 * time.Second); got == "" && time.Now().Before(deadline); tick++ {
		hub.Event("up", queue.Event{Tick: tick, Head: 3, Waiting: 7, Rate: 1})
		select {
		case d := <-lines:
			if strings.Contains(d, `"ticket":10`) {
				got = d
			}
		case <-time.After(50 * time.Millisecond):
		}
	}
	if !strings.Contains(got, `"rank":6`) || !strings.Contains(got, `"rankUpReason":"returned"`) {
		t.Fatalf("after the rank went up: %q, want rank 6 and rankUpReason returned", got)
	}
	hub.Event("up", queue.Event{Tick: tick, Head: 3, Waiting: 7, Rate: 1, Paused: true})
	select {
	case d := <-lines:
		if !strings.Contains(d, `"estimatedWaitSeconds":null`) || !strings.Contains(d, `"paused":true`) || strings.Contains(d, "rankUpReason") {
			t.Fatalf("paused tick: %q, want paused, no ETA, no reason", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event for the paused tick")
	}
}

// TestReadySpreadIsTheRooms: the room's readySpreadMs wins over the hub's
// default, and is held to one tick.
func TestReadySpreadIsTheRooms(t *testing.T) {
	ms := func(n int) *int { return &n }
	for _, tc := range []struct {
		name   string
		tick   time.Duration
		room   *int
		within time.Duration
	}{
		{"the room's 0 sends at once", 10 * time.Second, ms(0), time.Second},
		{"held to one tick", 200 * time.Millisecond, ms(10_000), 1500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := "tok"
			src := &fakeSource{snap: queue.Snapshot{Tick: 1, Waiting: 1, Rate: 1},
				pos: func(string) queue.Position { return queue.Position{Status: queue.StatusReady, EntryToken: &tok} }}
			hub := newHub(src, Options{Tick: tc.tick, ReadySpread: time.Hour, SeenEvery: time.Hour}, newMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
			defer hub.Close()
			r, err := hub.Room(t.Context(), "spread")
			if err != nil {
				t.Fatal(err)
			}
			srv, cli := tcpPair(t)
			c := newConn(srv)
			c.ip = "a"
			hub.acquireIP("a")
			hub.attach(r, c, queue.Position{Status: queue.StatusWaiting, Ticket: 1, Tick: 1})
			start := time.Now()
			hub.Event("spread", queue.Event{Tick: 2, Head: 1, Rate: 1, Phase: queue.PhaseOpen, ReadySpreadMs: tc.room})
			cli.SetReadDeadline(time.Now().Add(tc.within))
			buf := make([]byte, 4096)
			var got []byte
			for !strings.Contains(string(got), "event: ready") {
				n, err := cli.Read(buf)
				if err != nil {
					t.Fatalf("no ready within %v: %v (read %q)", tc.within, err, got)
				}
				got = append(got, buf[:n]...)
			}
			if !strings.Contains(string(got), `"t":`) {
				t.Fatalf("the ready event has no tick time: %q", got)
			}
			t.Logf("ready after %v", time.Since(start).Round(time.Millisecond))
		})
	}
}
