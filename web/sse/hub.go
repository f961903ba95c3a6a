// Package sse is the hub that pushes each room's admission events to the
// buyers' and the embedded widgets' server-sent event streams of this
// process. It folds the events of server/push into each room's state,
// fans them out to the streams without ever waiting for one, and owns the
// streams it is handed: their slots, heartbeats and writes.
package sse

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/push"
	"waitingroom/server/queue"
	"waitingroom/server/room"
)

// Source is what the hub asks Redis: a room's rank snapshot when it
// (re)syncs, one visitor's position when the head passes them, and, once per
// room per tick, which connected visitors are still there.
type Source interface {
	Snapshot(ctx context.Context, room string) (queue.Snapshot, error)
	Position(ctx context.Context, room, visitor string) (queue.Position, error)
	MarkSeen(ctx context.Context, room string, tickets []int64) error
}

// Options are the hub's needs and its tuning; zero values take the
// defaults. Source, Metrics and Log are required.
type Options struct {
	// Source is where the hub reads the rooms' state.
	Source Source
	// Metrics are the hub's collectors.
	Metrics Metrics
	// Log receives the hub's warnings.
	Log *slog.Logger

	// Heartbeat is the period of the beat every stream hears (default
	// 15 s); a counting page stops when it hears nothing for push.Quiet of it.
	Heartbeat time.Duration
	// SeenEvery is how often a connected visitor is marked as seen
	// (default 30 s; it must stay well under abandonAfterSeconds).
	SeenEvery time.Duration
	// MaxPerIP caps concurrent SSE connections per client IP (default
	// DefaultMaxPerIP).
	MaxPerIP int
	// ReadySpread spreads the ready events of one tick's batch uniformly
	// over this long, so that a batch does not reach the order database in
	// the same millisecond (0: no spread). Serve sets it to 80% of TICK.
	// It is the default: a room's readySpreadMs wins, held to one tick.
	ReadySpread time.Duration
	// MaxWidgets caps the process's embedded-widget streams (0: default
	// DefaultMaxWidgets; negative: none, the widgets poll).
	MaxWidgets int
	// Tick is the admission tick's period (default 1 s): the countdowns
	// the pages are told are in ticks.
	Tick time.Duration
	// MaxStreams caps the process's buyer streams (0: no cap); beyond it
	// a connect is answered 503, so the process keeps files for the rest.
	MaxStreams int
	// Clock is what the hub decides by (when a stream is next marked
	// seen, a room's ticks stalled, a widget's viewer is looked at, the
	// countdowns told) and waits on between its tries of Redis after an
	// outage (default: the real clock). Write deadlines and heartbeats
	// keep to the real clock: they are the network's.
	Clock clockwork.Clock
}

// Hub fans each room's admission events out to this process's SSE
// connections. It never blocks the subscription: a room whose previous
// fan-out is still running coalesces to the newest state, and a client
// whose socket cannot take an event at once is dropped.
type Hub struct {
	src     Source
	log     *slog.Logger
	metrics Metrics
	opt     Options

	conns   atomic.Int64 // open connections, for Connections
	widgets atomic.Int64 // open widget streams, for MaxWidgets
	buyers  atomic.Int64 // buyer streams counted, for MaxStreams

	mu    sync.Mutex
	rooms map[string]*Room
	perIP map[string]*ipSlots // see slots.go
	// perVisitor are each visitor's attached streams, oldest first (at
	// most MaxStreamsPerVisitor).
	perVisitor map[string][]*conn
	closed     bool
	// held are the streams kept while Redis is unreachable (see Hold),
	// and releasing is set while a loop waits to end them.
	held      map[*conn]struct{}
	releasing bool
	// subscribed is closed, and replaced, each time the subscription is
	// back: a wait for Redis to answer tries again at once.
	subscribed chan struct{}
	// lost is set while the subscription is down (from Lost to
	// Subscribed): a stream attached meanwhile is told of the outage,
	// which the streams attached before were told by Lost.
	lost atomic.Bool

	// born is the hub's clock's zero: connections keep when they were
	// last written to as nanoseconds since.
	born       time.Time
	resolveSem chan struct{}
	stop       chan struct{}
	wg         sync.WaitGroup
}

// Room is one room's state on the hub and the streams that follow it.
type Room struct {
	name   string
	loaded chan struct{} // closed once the first snapshot is in
	err    error         // the first snapshot's error, if any

	mu    sync.Mutex
	state push.State
	conns []*conn
	// widgets are the room's embedded-widget streams, apart from the
	// buyers' (conns): they are written after them, and only on a change.
	widgets []*conn
	// widgetsStale is set when the widgets were told of an outage: the
	// next pass sends them the state even if it did not change.
	widgetsStale atomic.Bool
	// widgetPeekAt is when the hub next looks for widget viewers that
	// left (see peekWidgets). Guarded by mu.
	widgetPeekAt time.Time
	// lastEvent is when the room's last event (or snapshot) came in: a
	// room with widgets that went quiet is resynced by the heartbeat,
	// which finds a room deleted by another process.
	lastEvent time.Time
	// broadcast and gen are what every page last had to hear of, and how
	// many times that changed (see generation); owned by the fan-out.
	broadcast broadcast
	gen       uint32
	// rateRef and rateGen are the rate the pages' waits were last
	// brought in line with, and how many times (see rateGeneration).
	rateRef float64
	rateGen uint32
	// counting is set when a pass tells a page to count down, and
	// cleared when a stall makes the pages hold; stale makes the next
	// pass tell every page (see stalled and Lost).
	counting atomic.Bool
	stale    atomic.Bool
	running  bool // a fan-out is under way
	pending  bool // another event arrived during it
	syncing  bool // a resync snapshot is under way
}

// NewHub returns a hub; Close stops it.
func NewHub(opt Options) *Hub {
	if opt.Heartbeat <= 0 {
		opt.Heartbeat = 15 * time.Second
	}
	if opt.SeenEvery <= 0 {
		opt.SeenEvery = 30 * time.Second
	}
	if opt.MaxPerIP <= 0 {
		opt.MaxPerIP = DefaultMaxPerIP
	}
	if opt.MaxWidgets == 0 {
		opt.MaxWidgets = DefaultMaxWidgets
	}
	if opt.Tick <= 0 {
		opt.Tick = time.Second
	}
	if opt.MaxStreams <= 0 {
		opt.MaxStreams = math.MaxInt32
	}
	if opt.Clock == nil {
		opt.Clock = clockwork.NewRealClock()
	}
	h := &Hub{src: opt.Source, log: opt.Log, metrics: opt.Metrics, opt: opt,
		rooms: map[string]*Room{}, perIP: map[string]*ipSlots{}, perVisitor: map[string][]*conn{},
		held: map[*conn]struct{}{}, subscribed: make(chan struct{}),
		born: opt.Clock.Now(), resolveSem: make(chan struct{}, 64), stop: make(chan struct{})}
	h.wg.Go(h.heartbeats)
	h.wg.Go(h.watchStalls)
	return h
}

// DefaultReadySpread returns the spread of one tick's turns in a room
// without readySpreadMs: Options.ReadySpread.
func (h *Hub) DefaultReadySpread() time.Duration { return h.opt.ReadySpread }

// Connections returns the number of SSE connections open on this hub.
func (h *Hub) Connections() int64 { return h.conns.Load() }

// now is the hub's clock's time.
func (h *Hub) now() time.Time { return h.opt.Clock.Now() }

// Close drops every connection (clients reconnect elsewhere, with the
// jittered retry they were given) and stops the heartbeat.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	h.mu.Unlock()
	rooms := h.roomList()
	close(h.stop)
	for _, r := range rooms {
		for _, c := range r.snapshotConns() {
			h.drop(c, nil)
		}
	}
	for _, c := range h.heldConns() {
		h.drop(c, nil)
	}
	h.wg.Wait()
}

// Event implements push.Handler: it folds the event into the room's state
// and schedules a fan-out. It never blocks on clients.
func (h *Hub) Event(room string, e queue.Event) {
	h.mu.Lock()
	r := h.rooms[room]
	h.mu.Unlock()
	if r == nil {
		return // no connection here has asked for this room
	}
	select {
	case <-r.loaded:
	default:
		return // the snapshot being loaded will include it
	}
	r.mu.Lock()
	r.lastEvent = h.now()
	if !r.state.Apply(e) {
		h.resyncLocked(r)
	}
	h.scheduleLocked(r)
	r.mu.Unlock()
}

// Subscribed implements push.Handler: events may have been lost while the
// subscription was down, so every room resyncs; and Redis is likely back,
// so every wait for it tries again at once.
func (h *Hub) Subscribed() {
	h.lost.Store(false)
	h.mu.Lock()
	close(h.subscribed)
	h.subscribed = make(chan struct{})
	h.mu.Unlock()
	rooms := h.roomList()
	for _, r := range rooms {
		select {
		case <-r.loaded:
		default:
			continue
		}
		r.mu.Lock()
		h.resyncLocked(r)
		r.mu.Unlock()
	}
}

// Lost implements push.Handler: Redis is gone, so every waiting page is
// told that its position is on hold (it shows "Reconnecting…") until the
// next position arrives.
func (h *Hub) Lost() {
	h.lost.Store(true)
	for _, r := range h.roomList() {
		r.widgetsStale.Store(true)
		r.stale.Store(true) // the first pass after it tells every page
		for _, c := range r.snapshotConns() {
			if c.done.Load() {
				continue
			}
			if err := c.writeFramed(outageFrame); err != nil {
				h.drop(c, err)
			}
		}
	}
}

// Room returns the room's hub state, loading its snapshot on first use:
// a stream is handed to the hub with the room it follows.
func (h *Hub) Room(ctx context.Context, name string) (*Room, error) {
	h.mu.Lock()
	r, ok := h.rooms[name]
	if !ok {
		r = &Room{name: name, loaded: make(chan struct{})}
		h.rooms[name] = r
		h.mu.Unlock()
		snap, err := h.src.Snapshot(ctx, name)
		r.mu.Lock()
		r.lastEvent = h.now()
		if err == nil {
			r.state.Reset(snap)
		}
		r.mu.Unlock()
		if err != nil {
			h.mu.Lock()
			delete(h.rooms, name) // let the next connection try again
			h.mu.Unlock()
			r.err = err
		}
		close(r.loaded)
		return r, err
	}
	h.mu.Unlock()
	select {
	case <-r.loaded:
		return r, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (h *Hub) resyncLocked(r *Room) {
	if r.syncing {
		return
	}
	r.syncing = true
	epoch := r.state.Epoch
	go func() {
		// Right after an outage the Redis client may still refuse for a
		// while (see redisconn.Unreachable): the resync waits for Redis
		// rather than leave the room's pages on the state from before.
		var snap queue.Snapshot
		err := h.untilAnswered(func(ctx context.Context) error {
			var err error
			snap, err = h.src.Snapshot(ctx, r.name)
			return err
		})
		r.mu.Lock()
		defer r.mu.Unlock()
		r.syncing = false
		if errors.Is(err, errStopped) {
			return
		}
		if r.state.Epoch != epoch {
			// The room started again while the snapshot was on its way: it
			// may be the old room's, read before (or its absence, read in
			// between). Read it again.
			h.resyncLocked(r)
			return
		}
		if errors.Is(err, room.ErrNotFound) {
			go h.widgetsGone(r) // tell its widgets; buyers keep their state
			return
		}
		if err != nil {
			h.log.Warn("sse: resync", "room", r.name, "err", err)
			return
		}
		r.state.Reset(snap)
		h.scheduleLocked(r)
	}()
}

func (h *Hub) scheduleLocked(r *Room) {
	if r.running {
		r.pending = true
		return
	}
	r.running = true
	go h.fanOut(r)
}

// roomList returns the rooms the hub knows, for a pass over all of them.
func (h *Hub) roomList() []*Room {
	h.mu.Lock()
	defer h.mu.Unlock()
	rooms := make([]*Room, 0, len(h.rooms))
	for _, r := range h.rooms {
		rooms = append(rooms, r)
	}
	return rooms
}

// snapshotConns returns the room's connections, buyers' and widgets'.
func (r *Room) snapshotConns() []*conn {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(append([]*conn(nil), r.conns...), r.widgets...)
}
