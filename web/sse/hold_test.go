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
	"syscall"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/queue"
)

// holdWait bounds the waits of these tests for what must happen; only a
// hang reaches it.
const holdWait = 10 * time.Second

// refusingSource answers as a Redis client does just after Redis came
// back: while refuse is set, every read fails with the dial error it
// remembers.
type refusingSource struct {
	mu     sync.Mutex
	refuse bool
	snap   queue.Snapshot
	tries  int
}

var errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: &net.OpError{Op: "connect", Err: syscall.ECONNREFUSED}}

func (s *refusingSource) set(refuse bool, snap queue.Snapshot) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse, s.snap = refuse, snap
}

func (s *refusingSource) Snapshot(context.Context, string) (queue.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tries++
	if s.refuse {
		return queue.Snapshot{}, errRefused
	}
	return s.snap, nil
}

func (s *refusingSource) Position(context.Context, string, string) (queue.Position, error) {
	return queue.Position{}, errRefused
}

func (s *refusingSource) MarkSeen(context.Context, string, []int64) error { return nil }

// stepClock is the real clock but for its waits (After), which the test
// sees and ends.
type stepClock struct {
	clockwork.Clock
	waits chan clockWait
}

type clockWait struct {
	d  time.Duration
	ch chan time.Time
}

func newStepClock() *stepClock {
	return &stepClock{Clock: clockwork.NewRealClock(), waits: make(chan clockWait)}
}

func (c *stepClock) After(d time.Duration) <-chan time.Time {
	w := clockWait{d: d, ch: make(chan time.Time, 1)}
	c.waits <- w
	return w.ch
}

// next returns the hub's next wait, once it waits.
func (c *stepClock) next(t *testing.T) clockWait {
	t.Helper()
	select {
	case w := <-c.waits:
		return w
	case <-time.After(holdWait):
		t.Fatal("the hub does not wait to try Redis again")
		return clockWait{}
	}
}

func (w clockWait) fire() { w.ch <- time.Time{} }

// readUntil reads from br until what it read contains want.
func readUntil(t *testing.T, cli net.Conn, br *bufio.Reader, want string) string {
	t.Helper()
	cli.SetReadDeadline(time.Now().Add(holdWait))
	var b strings.Builder
	for !strings.Contains(b.String(), want) {
		c, err := br.ReadByte()
		if err != nil {
			t.Fatalf("reading up to %q: %v after %q", want, err, b.String())
		}
		b.WriteByte(c)
	}
	return b.String()
}

// TestHoldKeepsTheStreamUntilRedisAnswers: a stream that could not be
// served because Redis is unreachable is answered 200 with an outage
// event and kept; the hub tries Redis again, and a refusal right after
// the subscription came back (the client's remembered dial error) only
// makes it try again. Once Redis answers, the stream ends with a short
// retry, so that the page reconnects at once.
func TestHoldKeepsTheStreamUntilRedisAnswers(t *testing.T) {
	src := &refusingSource{refuse: true}
	clk := newStepClock()
	hub := newHub(src, Options{Clock: clk}, newMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer hub.Close()
	srv, cli := tcpPair(t)
	slot, err := hub.Reserve("10.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	hub.Hold(srv, "held", slot)
	br := bufio.NewReader(cli)
	head := readUntil(t, cli, br, "event: outage\ndata: {\"reconnecting\":true}\n\n\r\n")
	if !strings.HasPrefix(head, "HTTP/1.1 200 OK\r\n") || !strings.Contains(head, "Content-Type: text/event-stream\r\n") || !strings.Contains(head, "\nretry: ") {
		t.Fatalf("held stream's start: %q", head)
	}
	if n := hub.Connections(); n != 1 {
		t.Fatalf("%d connections, want the held one", n)
	}

	// Refused: the hub waits longer each time, up to its longest wait.
	for _, want := range []time.Duration{retryRedisFirst, 2 * retryRedisFirst, 4 * retryRedisFirst, retryRedisMax, retryRedisMax} {
		w := clk.next(t)
		if w.d != want {
			t.Fatalf("wait %v, want %v", w.d, want)
		}
		w.fire()
	}
	clk.next(t) // waiting again; the subscription comes back
	hub.Subscribed()
	w := clk.next(t) // tried at once, refused again: it waits from the start
	if w.d != retryRedisFirst {
		t.Fatalf("wait after the subscription came back %v, want %v", w.d, retryRedisFirst)
	}
	cli.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if b, err := br.Peek(1); err == nil {
		t.Fatalf("the held stream was ended while Redis refused: %q", b)
	}

	src.set(false, queue.Snapshot{Tick: 3})
	w.fire()
	cli.SetReadDeadline(time.Now().Add(holdWait))
	rest, err := io.ReadAll(br)
	if err != nil {
		t.Fatalf("released stream: %v after %q", err, rest)
	}
	retry := string(rest)
	if !strings.HasSuffix(retry, "\r\n0\r\n\r\n") {
		t.Fatalf("released stream does not end its response: %q", rest)
	}
	i := strings.Index(retry, "retry: ")
	if i < 0 {
		t.Fatalf("released stream gives no retry: %q", rest)
	}
	ms, err := strconv.Atoi(retry[i+7 : i+7+strings.IndexByte(retry[i+7:], '\n')])
	if err != nil {
		t.Fatalf("released stream's retry: %q", rest)
	}
	if d := time.Duration(ms) * time.Millisecond; d < releaseRetryMin || d >= releaseRetryMin+releaseRetrySpread {
		t.Fatalf("released stream's retry %v, want [%v, %v)", d, releaseRetryMin, releaseRetryMin+releaseRetrySpread)
	}
	for deadline := time.Now().Add(holdWait); hub.Connections() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections after the release", hub.Connections())
		}
	}
}

// TestResyncWaitsForRedis: when the subscription comes back but the
// Redis client still refuses, the room's resync tries again until Redis
// answers, and the pages get the room's state; it is not given up, which
// would leave them silent until the room's next event.
func TestResyncWaitsForRedis(t *testing.T) {
	src := &refusingSource{snap: queue.Snapshot{Tick: 1, Waiting: 6, Rate: 1}}
	clk := newStepClock()
	hub := newHub(src, Options{Clock: clk}, newMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer hub.Close()
	r, err := hub.Room(context.Background(), "resync")
	if err != nil {
		t.Fatal(err)
	}
	srv, cli := tcpPair(t)
	c := newConn(srv)
	hub.acquireIP("x")
	c.ip = "x"
	hub.attach(r, c, queue.Position{Status: queue.StatusWaiting, Ticket: 5, Rank: 4, Tick: 1})
	br := bufio.NewReader(cli)

	src.set(true, queue.Snapshot{})
	hub.Lost()
	readUntil(t, cli, br, "event: outage")
	hub.Subscribed()
	w := clk.next(t) // the resync was refused: it waits
	src.set(false, queue.Snapshot{Tick: 4, Head: 2, Waiting: 4, Rate: 1})
	w.fire()
	readUntil(t, cli, br, "event: position")
	got := readUntil(t, cli, br, "\n\n")
	if !strings.Contains(got, `"rank":2,`) {
		t.Fatalf("after the resync: %q, want the position at rank 2", got)
	}
}
