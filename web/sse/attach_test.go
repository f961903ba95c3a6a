package sse

import (
	"bufio"
	"context"
	"io"
	"log/slog"
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
