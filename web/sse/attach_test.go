package sse

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/server/queue"
)

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
	hub := newHub(src, Options{SeenEvery: time.Hour}, newMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer hub.Close()
	r, err := hub.Room(context.Background(), "first")
	if err != nil {
		t.Fatal(err)
	}
	hub.Event("first", queue.Event{Tick: 1, Head: 0, Waiting: 10, Rate: 1}) // the first tick, mid-handshake
	srv, cli := tcpPair(t)
	c := newConn(srv)
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

// TestRoomStartedAgainBeforeItsFirstTick: a room deleted and created again
// (or restored) counts its tickets anew. A visitor of the new room whose
// stream attaches while this process still follows the old room (the new
// room's first tick has not reached it, and the old room's last events
// still arrive) must not be told a rank computed from the old room's head:
// the first rank its page hears is the new room's.
func TestRoomStartedAgainBeforeItsFirstTick(t *testing.T) {
	const oldBorn, newBorn = 1000, 2000
	var restarted atomic.Bool // Redis holds the new room
	src := &fakeSource{
		snapOf: func() queue.Snapshot {
			if restarted.Load() {
				return queue.Snapshot{Tick: 3, Head: 0, Waiting: 6, Rate: 1, Born: newBorn}
			}
			return queue.Snapshot{Tick: 60, Head: 1, Rate: 1, Born: oldBorn}
		},
		pos: func(string) queue.Position {
			return queue.Position{Status: queue.StatusWaiting, Ticket: 6, Rank: 5, Tick: 3, Born: newBorn}
		}}
	hub := newHub(src, Options{SeenEvery: time.Hour}, newMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer hub.Close()
	r, err := hub.Room(context.Background(), "again")
	if err != nil {
		t.Fatal(err)
	}
	hub.Event("again", queue.Event{Tick: 60, Head: 1, Rate: 1, Born: oldBorn}) // the old room
	restarted.Store(true)
	srv, cli := tcpPair(t)
	c := newConn(srv)
	c.ip, c.visitor = "x", "v"
	hub.acquireIP("x")
	hub.attach(r, c, queue.Position{Status: queue.StatusWaiting, Ticket: 6, Rank: 5, Tick: 3, Born: newBorn})

	ranks := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(cli)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), `"rank":`); ok {
				n, _, _ := strings.Cut(rest, ",")
				ranks <- n
			}
		}
		close(ranks)
	}()
	// The old room's last events arrive after the attach, then the new
	// room's ticks, until the page hears a rank.
	for tick := int64(61); tick <= 62; tick++ {
		hub.Event("again", queue.Event{Tick: tick, Head: 1, Rate: 1, Born: oldBorn})
		// Each pass over the old room's state ends before the next event.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			r.mu.Lock()
			busy := r.running
			r.mu.Unlock()
			if !busy {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the pass over the old room's state did not end")
			}
		}
	}
	deadline := time.After(5 * time.Second)
	for tick := int64(4); ; tick++ {
		hub.Event("again", queue.Event{Tick: tick, Head: 0, Waiting: 6, Rate: 1, Born: newBorn})
		select {
		case rank, ok := <-ranks:
			if !ok {
				t.Fatal("the stream closed without a rank")
			}
			if rank != "5" {
				t.Fatalf("the page first heard rank %s, want the new room's 5 (not the old room's)", rank)
			}
			return
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no rank by the new room's tick %d: the stream stayed silent", tick)
		}
	}
}

// TestAttachDuringAnOutage: a stream handed to the hub while the
// subscription is down (its first event written before Lost, its attach
// after) is told of the outage, as the streams attached before were;
// once the subscription is back, a stream attached is not.
func TestAttachDuringAnOutage(t *testing.T) {
	for _, tc := range []struct {
		name string
		back bool
		want []string
	}{
		{"subscription down", false, []string{"buyer:outage"}},
		{"subscription back", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hub := newHub(&fakeSource{snap: queue.Snapshot{Tick: 1, Waiting: 5, Rate: 1}}, Options{SeenEvery: time.Hour},
				newMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
			defer hub.Close()
			r, err := hub.Room(context.Background(), "down")
			if err != nil {
				t.Fatal(err)
			}
			hub.Lost()
			if tc.back {
				hub.Subscribed()
				settle(t, r)
			}
			log := &recLog{}
			hub.attach(r, newConn(&recConn{name: "buyer", log: log}), queue.Position{Status: queue.StatusWaiting, Ticket: 3, Rank: 2, Tick: 1})
			if got := log.list(); strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("written %v, want %v", got, tc.want)
			}
		})
	}
}
