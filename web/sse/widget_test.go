package sse

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/push"
	"waitingroom/server/queue"
)

// recLog records, in order, the events written to recConns.
type recLog struct {
	mu      sync.Mutex
	entries []string // "conn:event"
}

func (l *recLog) add(name string, b []byte) {
	s := string(b)
	i := strings.Index(s, "event: ")
	if i < 0 {
		return // a heartbeat or a retry line
	}
	ev := s[i+len("event: "):]
	ev = ev[:strings.IndexByte(ev, '\n')]
	l.mu.Lock()
	l.entries = append(l.entries, name+":"+ev)
	l.mu.Unlock()
}

func (l *recLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.entries...)
}

// recConn is a connection that records what the hub writes to it.
type recConn struct {
	net.Conn
	name string
	log  *recLog
}

func (c *recConn) Write(b []byte) (int, error)      { c.log.add(c.name, b); return len(b), nil }
func (c *recConn) SetWriteDeadline(time.Time) error { return nil }
func (c *recConn) Close() error                     { return nil }

// settle waits until r's fan-out has no pass running or due and no resync
// in flight: everything the events before it caused is written.
func settle(t *testing.T, r *Room) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		r.mu.Lock()
		idle := !r.running && !r.pending && !r.syncing
		r.mu.Unlock()
		if idle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the room's fan-out never settled")
		}
	}
}

// TestWidgetFanOut: a room's widgets are written after its buyers in a
// tick, and only when what they show changed.
func TestWidgetFanOut(t *testing.T) {
	base := queue.Event{Tick: 2, Head: 0, Waiting: 5, Rate: 1, Phase: queue.PhaseOpen, TimeMicros: 1}
	for _, tc := range []struct {
		name string
		next func(e queue.Event) queue.Event
		want []string
	}{
		{"no visible change: no widget frame", func(e queue.Event) queue.Event { e.TimeMicros = 2; return e },
			[]string{"buyer:position"}},
		{"fewer waiting: buyers first, then the widget", func(e queue.Event) queue.Event { e.Waiting = 4; return e },
			[]string{"buyer:position", "widget:room"}},
		{"paused", func(e queue.Event) queue.Event { e.Paused = true; return e },
			[]string{"buyer:position", "widget:room"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hub := newHub(&fakeSource{snap: queue.Snapshot{Tick: 1, Waiting: 5, Rate: 1}}, Options{SeenEvery: time.Hour},
				newMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
			defer hub.Close()
			r, err := hub.Room(context.Background(), "fan")
			if err != nil {
				t.Fatal(err)
			}
			hub.Event("fan", base)
			settle(t, r)
			log := &recLog{}
			buyer := newConn(&recConn{name: "buyer", log: log})
			hub.attach(r, buyer, queue.Position{Status: queue.StatusWaiting, Ticket: 10, Rank: 9, Tick: 2})
			widget := newConn(&recConn{name: "widget", log: log})
			hub.widgets.Add(1)
			v, _ := hub.View(r, time.Now())
			hub.attachWidget(r, widget, v)
			e := tc.next(base)
			e.Tick = 3
			hub.Event("fan", e)
			settle(t, r)
			if got := log.list(); strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("written %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWidgetAttachAcrossARestart: a widget whose view was read before its
// room started again is not held to the old epoch's tick.
func TestWidgetAttachAcrossARestart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		restart bool
	}{
		{"room started again between the view and the attach", true},
		{"same epoch", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hub := newHub(&fakeSource{snap: queue.Snapshot{Tick: 1, Waiting: 5, Rate: 1}}, Options{SeenEvery: time.Hour},
				newMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
			defer hub.Close()
			r, err := hub.Room(context.Background(), "epoch")
			if err != nil {
				t.Fatal(err)
			}
			hub.Event("epoch", queue.Event{Tick: 50, Waiting: 5, Rate: 1, Phase: queue.PhaseOpen})
			settle(t, r)
			v, _ := hub.View(r, time.Now()) // tick 50
			tick := int64(51)
			if tc.restart {
				// The room is deleted and created: its ticks count from 1.
				hub.Event("epoch", queue.Event{Tick: 1, Waiting: 5, Rate: 1, Phase: queue.PhaseOpen})
				settle(t, r)
				tick = 2
			}
			log := &recLog{}
			c := newConn(&recConn{name: "widget", log: log})
			hub.widgets.Add(1)
			hub.attachWidget(r, c, v)
			hub.Event("epoch", queue.Event{Tick: tick, Waiting: 3, Rate: 1, Phase: queue.PhaseOpen})
			settle(t, r)
			if got := log.list(); len(got) == 0 {
				t.Fatal("the widget was sent nothing of its room's new state")
			}
		})
	}
}

// TestWidgetStreamCap: MaxWidgets caps the widget streams; negative
// (WIDGET_MAX_STREAMS=0) allows none, zero takes the default.
func TestWidgetStreamCap(t *testing.T) {
	for _, tc := range []struct {
		name string
		max  int
		want int
	}{
		{"none: widgets poll only", -1, 0},
		{"two", 2, 2},
		{"default", 0, DefaultMaxWidgets},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hub := newHub(&fakeSource{}, Options{MaxWidgets: tc.max}, newMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
			defer hub.Close()
			got := 0
			for range DefaultMaxWidgets + 1 {
				if hub.acquireWidget() {
					got++
				}
			}
			if got != tc.want {
				t.Fatalf("%d widget streams taken, want %d", got, tc.want)
			}
		})
	}
}

// TestWidgetETA: a wait is told only when someone waits.
func TestWidgetETA(t *testing.T) {
	for _, tc := range []struct {
		name    string
		waiting int64
		want    string
	}{
		{"nobody waiting", 0, `"eta":null`},
		{"two waiting", 2, `"eta":1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := push.State{}
			st.Phase, st.Waiting, st.Rate = queue.PhaseOpen, tc.waiting, 5
			if got := string(widgetOf(&st, time.Now()).AppendJSON(nil)); !strings.Contains(got, tc.want) {
				t.Fatalf("%s, want %s", got, tc.want)
			}
		})
	}
}

// TestWidgetViewerWhoLeftIsDropped: a viewer who closed the widget is
// found gone, though nothing changed to write to it, and though the room
// does not tick at all (it sleeps): the hub's clock moves 100 ms at a
// time, with a tick each time or none, until a peek has looked (every
// widgetPeekEvery) or 58 steps passed.
func TestWidgetViewerWhoLeftIsDropped(t *testing.T) {
	for _, tc := range []struct {
		name         string
		leave, ticks bool
	}{
		{"viewer left", true, true},
		{"viewer stays", false, true},
		{"viewer left a room that sleeps", true, false},
		{"viewer stays in a room that sleeps", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clockwork.NewFakeClockAt(time.Now())
			hub := newHub(&fakeSource{snap: queue.Snapshot{Tick: 1, Rate: 1}}, Options{Clock: clock}, newMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
			defer hub.Close()
			r, err := hub.Room(context.Background(), "left")
			if err != nil {
				t.Fatal(err)
			}
			srv, cli := tcpPair(t)
			hub.widgets.Add(1)
			v, _ := hub.View(r, clock.Now())
			hub.attachWidget(r, newConn(srv), v)
			if tc.leave {
				cli.Close()
			}
			// The same view every tick, or no tick; the hub's watcher looks
			// on its own ticker, between the steps (polled every 5 ms).
			for tick := int64(2); tick < 60 && hub.Widgets() == 1; tick++ {
				if tc.ticks {
					hub.Event("left", queue.Event{Tick: tick, Rate: 1, Phase: queue.PhaseOpen})
					settle(t, r)
				}
				clock.Advance(100 * time.Millisecond)
				time.Sleep(5 * time.Millisecond)
			}
			if want := map[bool]int64{true: 0, false: 1}[tc.leave]; hub.Widgets() != want {
				t.Fatalf("%d widget streams held, want %d", hub.Widgets(), want)
			}
		})
	}
}
