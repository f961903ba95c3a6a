package sse

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"waitingroom/server/queue"
)

// newHub returns a hub on src with fresh or given collectors.
func newHub(src Source, opt Options, m Metrics, log *slog.Logger) *Hub {
	opt.Source, opt.Metrics, opt.Log = src, m, log
	return NewHub(opt)
}

// newMetrics returns unregistered collectors for a hub under test.
func newMetrics() Metrics {
	return Metrics{
		Connections:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "c"}),
		Events:         prometheus.NewCounter(prometheus.CounterOpts{Name: "e"}),
		SlowDrops:      prometheus.NewCounter(prometheus.CounterOpts{Name: "s"}),
		Corrections:    prometheus.NewCounter(prometheus.CounterOpts{Name: "k"}),
		FanoutDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "f"}),
	}
}

// fakeSource answers the hub without Redis.
type fakeSource struct {
	snap queue.Snapshot
	// snapOf, when set, is read instead of snap.
	snapOf func() queue.Snapshot
	pos    func(visitor string) queue.Position
	seen   atomic.Int64
}

func (f *fakeSource) Snapshot(context.Context, string) (queue.Snapshot, error) {
	if f.snapOf != nil {
		return f.snapOf(), nil
	}
	return f.snap, nil
}
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

// TestOutageIsToldToWaitingPages: when the subscription breaks, every
// waiting page gets an outage event (it shows "Reconnecting…").
func TestOutageIsToldToWaitingPages(t *testing.T) {
	src := &fakeSource{snap: queue.Snapshot{Tick: 1, Waiting: 2, Rate: 1}}
	hub := newHub(src, Options{}, newMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer hub.Close()
	r, _ := hub.Room(context.Background(), "outage")
	var clients []net.Conn
	for i := range 3 {
		srv, cli := tcpPair(t)
		c := newConn(srv)
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

// TestSnapshotOfTheOldRoomIsReadAgain: a resync's snapshot read before the
// room started again (deleted and created, or restored) and answered after
// the new room's first event is the old room's. It is read again, so that
// the state follows the new room, not the old one's head and ticks.
func TestSnapshotOfTheOldRoomIsReadAgain(t *testing.T) {
	const oldBorn, newBorn = 1000, 2000
	var calls atomic.Int64
	release := make(chan struct{})
	src := &fakeSource{
		snapOf: func() queue.Snapshot {
			switch calls.Add(1) {
			case 1: // the room's first load
				return queue.Snapshot{Tick: 60, Head: 1, Rate: 1, Born: oldBorn}
			case 2: // read before the restart, answered after it
				<-release
				return queue.Snapshot{Tick: 62, Head: 1, Rate: 1, Born: oldBorn}
			}
			return queue.Snapshot{Tick: 1, Head: 0, Waiting: 6, Rate: 1, Born: newBorn}
		},
		pos: func(string) queue.Position { return queue.Position{Status: queue.StatusWaiting} },
	}
	hub := newHub(src, Options{SeenEvery: time.Hour}, newMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer hub.Close()
	r, err := hub.Room(context.Background(), "again")
	if err != nil {
		t.Fatal(err)
	}
	hub.Event("again", queue.Event{Tick: 62, Head: 1, Rate: 1, Born: oldBorn}) // a gap: the resync starts
	hub.Event("again", queue.Event{Tick: 1, Head: 0, Waiting: 6, Rate: 1, Born: newBorn})
	close(release)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		r.mu.Lock()
		st, syncing := r.state.Clone(), r.syncing
		r.mu.Unlock()
		if calls.Load() >= 3 && !syncing && st.Born == newBorn && st.Head == 0 && st.Tick == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart the state is %+v after %d snapshots, want the new room's", st, calls.Load())
		}
	}
}
