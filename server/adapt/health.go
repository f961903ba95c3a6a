package adapt

import (
	"context"
	"log/slog"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/loop"
	"waitingroom/server/queue"
)

// The shop's own word: a room may name a healthURL (room.Adapt.HealthURL)
// whose answer gives a load figure (1 or more: overloaded). A
// HealthPoller on every instance polls each adaptive room's healthURL
// about once a second across all instances (a Redis claim per room and
// interval elects the instance), and writes the figure, or that none came,
// to the room's signal hash of that second: the Reader gives the latest of
// the window as Signal.Load and HasLoad, and the Controller freezes the
// rate of a room whose healthURL gave none.

// HealthProbe reads the load figure that a health URL answers. The
// implementation (web's) bounds the call: at most HealthTimeout, no
// redirect followed, a bounded body, http and https only.
type HealthProbe interface {
	Load(ctx context.Context, url string) (float64, error)
}

// HealthRooms lists the adaptive rooms and their settings (queue.Engine).
type HealthRooms interface {
	AdaptiveRooms(ctx context.Context) ([]string, error)
	AdaptRooms(ctx context.Context, names []string) (map[string]queue.AdaptRoom, error)
}

const (
	// HealthTimeout bounds one poll of a healthURL.
	HealthTimeout = 800 * time.Millisecond
	// maxPolls bounds this instance's polls in flight; a room whose poll
	// finds none free is polled at a later interval.
	maxPolls = 32
	// healthLogEvery spaces out the warnings of a room's failing poll.
	healthLogEvery = time.Minute
)

// HealthPoller polls the adaptive rooms' healthURLs.
type HealthPoller struct {
	rooms HealthRooms
	probe HealthProbe
	rdb   redis.UniversalClient
	ns    string
	log   *slog.Logger
	every time.Duration
	clk   clockwork.Clock
	slots chan struct{}
	wg    sync.WaitGroup

	mu     sync.Mutex
	warned map[string]time.Time // room → its last failure warning
}

// NewHealthPoller returns a HealthPoller of namespace ns that polls every
// second.
func NewHealthPoller(rooms HealthRooms, probe HealthProbe, rdb redis.UniversalClient, ns string, log *slog.Logger) *HealthPoller {
	return &HealthPoller{rooms: rooms, probe: probe, rdb: rdb, ns: ns, log: log, every: time.Second, clk: clockwork.NewRealClock(),
		slots: make(chan struct{}, maxPolls), warned: map[string]time.Time{}}
}

// WithClock has the poller tick and stamp by clk, and returns the poller.
// Call it before Run.
func (h *HealthPoller) WithClock(clk clockwork.Clock) *HealthPoller {
	h.clk = clk
	return h
}

// Run polls every second until ctx is done, and waits for the polls in
// flight.
func (h *HealthPoller) Run(ctx context.Context) {
	defer h.wg.Wait()
	loop.Every(ctx, h.clk, h.every, h.every, h.Tick)
}

// Tick starts the polls of the adaptive rooms with a healthURL that this
// instance claims for this interval; it does not wait for them.
func (h *HealthPoller) Tick(ctx context.Context) {
	names, err := h.rooms.AdaptiveRooms(ctx)
	if err != nil || len(names) == 0 {
		return // the controller warns of the same reads
	}
	rooms, err := h.rooms.AdaptRooms(ctx, names)
	if err != nil {
		return
	}
	var polled []string
	claims := map[string]*redis.BoolCmd{}
	pipe := h.rdb.Pipeline()
	for name, r := range rooms {
		if r.Adapt.HealthURL != "" {
			polled = append(polled, name)
			claims[name] = pipe.SetNX(ctx, queue.RoomKey(h.ns, name, "healthpoll"), "1", h.every-h.every/10)
		}
	}
	if len(polled) == 0 {
		return
	}
	if _, err := pipe.Exec(ctx); err != nil {
		if ctx.Err() == nil {
			h.log.Warn("adapt: claim health polls", "err", err)
		}
		return
	}
	for _, name := range polled {
		if !claims[name].Val() {
			continue // another instance polls it this interval
		}
		select {
		case h.slots <- struct{}{}:
		default:
			continue
		}
		h.wg.Go(func() {
			defer func() { <-h.slots }()
			h.poll(ctx, name, rooms[name].Adapt.HealthURL)
		})
	}
}

// poll reads room's healthURL once and writes the figure, or that none
// came, to the room's signal hash of this second.
func (h *HealthPoller) poll(ctx context.Context, roomName, healthURL string) {
	pctx, cancel := context.WithTimeout(ctx, HealthTimeout)
	load, err := h.probe.Load(pctx, healthURL)
	cancel()
	if ctx.Err() != nil {
		return
	}
	field, value := fLoad, strconv.FormatFloat(load, 'g', -1, 64)
	if err != nil {
		field, value = fNoLoad, "1"
		h.warn(roomName, healthURL, err)
	}
	k := signalKey(h.ns, roomName, h.clk.Now().Unix())
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	pipe := h.rdb.Pipeline()
	pipe.HSet(wctx, k, field, value)
	pipe.Expire(wctx, k, keepSeconds*time.Second)
	if _, err := pipe.Exec(wctx); err != nil && ctx.Err() == nil {
		h.log.Warn("adapt: write health", "room", roomName, "err", err)
	}
}

// warn logs a failed poll of room, at most once per healthLogEvery, with
// the URL's scheme, host and path only: its query may hold a secret.
func (h *HealthPoller) warn(roomName, healthURL string, err error) {
	now := h.clk.Now()
	h.mu.Lock()
	last, seen := h.warned[roomName]
	if seen && now.Sub(last) < healthLogEvery {
		h.mu.Unlock()
		return
	}
	h.warned[roomName] = now
	for name, at := range h.warned { // forget the rooms that stopped failing
		if now.Sub(at) > 2*healthLogEvery {
			delete(h.warned, name)
		}
	}
	h.mu.Unlock()
	h.log.Warn("adapt: health URL gave no load figure; the room's rate is frozen", "room", roomName,
		"url", redactURL(healthURL), "err", err)
}

// redactURL is u's scheme, host and path: never its query, which may hold
// a token.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable)"
	}
	return p.Scheme + "://" + p.Host + p.Path
}
