package gate

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sync"
	"time"
)

const (
	// configTTL is how long the room's gate settings are cached.
	configTTL = 60 * time.Second
	// downProbeEvery is how often the settings are fetched again while
	// waitingroom is down, to notice that it is back.
	downProbeEvery = 5 * time.Second
	// logEvery spaces out repeated warnings.
	logEvery = time.Minute
)

// throttle allows one event per logEvery.
type throttle struct {
	mu   sync.Mutex
	last time.Time
}

func (t *throttle) allow(now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.last.IsZero() && now.Sub(t.last) < logEvery {
		return false
	}
	t.last = now
	return true
}

// health remembers whether the last call to waitingroom got an answer.
type health struct {
	mu        sync.Mutex
	downSince time.Time // zero while up
	fails     uint64    // failed calls so far
	failLog   throttle
	misconfig throttle
}

func (h *health) down(now time.Time) {
	h.mu.Lock()
	if h.downSince.IsZero() {
		h.downSince = now
	}
	h.fails++
	h.mu.Unlock()
}

func (h *health) up() {
	h.mu.Lock()
	h.downSince = time.Time{}
	h.mu.Unlock()
}

func (h *health) isDown() bool {
	return !h.since().IsZero()
}

// since is when waitingroom went down, zero while up.
func (h *health) since() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.downSince
}

// failCount is the number of failed calls so far.
func (h *health) failCount() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fails
}

// configCache holds the room's failOpen from GET /api/rooms/{room}/gate.
type configCache struct {
	mu       sync.Mutex
	known    bool
	failOpen bool
	tried    time.Time
	seen     uint64 // health.fails when the last fetch started
	busy     bool
}

// refreshConfig fetches the room's gate settings in the background when
// the cached ones are older than configTTL. The fetch doubles as a health
// probe: after a call fails it runs soon (a second later, so that a lone
// lost call does not leave the gate in its fail mode), then every
// downProbeEvery until waitingroom answers. At most one fetch runs at a
// time; the request that starts it does not wait.
func (g *Gate) refreshConfig() {
	now := g.now()
	every := configTTL
	if g.health.isDown() {
		every = downProbeEvery
	}
	fails := g.health.failCount()
	c := g.cfg
	c.mu.Lock()
	due := c.tried.IsZero() || now.Sub(c.tried) >= every || (fails > c.seen && now.Sub(c.tried) >= time.Second)
	if c.busy || !due {
		c.mu.Unlock()
		return
	}
	c.busy, c.tried, c.seen = true, now, fails
	c.mu.Unlock()
	go func() {
		open, ok := g.fetchConfig(context.Background())
		c.mu.Lock()
		c.busy = false
		if ok {
			c.known, c.failOpen = true, open
		}
		c.mu.Unlock()
	}()
}

// fetchConfig reads the room's failOpen; ok is false when it could not.
func (g *Gate) fetchConfig(ctx context.Context) (failOpen, ok bool) {
	a, err := g.call(ctx, "gate settings", http.MethodGet, "/api/rooms/"+url.PathEscape(g.opts.Room)+"/gate", nil, false)
	if err != nil {
		return false, false
	}
	var cfg struct {
		FailOpen *bool `json:"failOpen"`
	}
	if a.status != http.StatusOK || json.Unmarshal(a.body, &cfg) != nil || cfg.FailOpen == nil {
		_ = g.misconfigured("gate settings", a)
		return false, false
	}
	return *cfg.FailOpen, true
}

// failOpen reports the mode for when waitingroom cannot be reached:
// Options.FailOpen, else the room's cached setting, else closed.
func (g *Gate) failOpen() bool {
	if g.opts.FailOpen != nil {
		return *g.opts.FailOpen
	}
	g.cfg.mu.Lock()
	defer g.cfg.mu.Unlock()
	return g.cfg.known && g.cfg.failOpen
}

// fail answers a request that needs waitingroom while it cannot be
// reached: through to next when failing open, else the "please retry" page
// (with the retry form re when not nil). It logs at most once a minute.
func (g *Gate) fail(w http.ResponseWriter, r *http.Request, next http.Handler, err error, re *repost) {
	open := g.failOpen()
	if g.health.failLog.allow(g.now()) {
		g.log.Warn("gate: waitingroom unavailable", "failOpen", open, "err", err)
	}
	if open {
		w.Header().Set("X-Waitingroom-Fail", "open")
		next.ServeHTTP(w, r)
		return
	}
	g.page(w, r, http.StatusServiceUnavailable, pageRetry, re)
}
