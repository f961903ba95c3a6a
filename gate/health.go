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
	// downProbeEvery is how often the probe runs while waitingroom is
	// down, to notice that it is back.
	downProbeEvery = 5 * time.Second
	// probeFails is how many probes in a row must fail before waitingroom
	// counts as down.
	probeFails = 3
	// probeGap is the pause between the probes that confirm an outage.
	probeGap = time.Second
	// suspectGap is the least time between two probes that failed calls
	// start while waitingroom is up.
	suspectGap = time.Second
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

// health is whether waitingroom is down, as only the background probe
// (GET /api/rooms/{room}/gate) decides: down after probeFails failed
// probes in a row, up at the first probe that gets an answer. Failed calls
// of requests start a probe; they never change the state themselves, so
// that nobody outside can force the gate into its fail mode.
type health struct {
	mu        sync.Mutex
	downSince time.Time // zero while up
	streak    int       // failed probes in a row
	fails     uint64    // failed probes so far
	probing   bool      // a probe runs
	lastProbe time.Time // when the last probe started
	failLog   throttle  // "waitingroom unavailable" (the fail mode)
	reqLog    throttle  // a request failed closed
	misconfig throttle  // waitingroom refused a call
	setup     changeLog // the room's settings do not fit this gate (audience, gate off, no room)
}

// changeLog allows one log of a problem per logEvery, and at once when the
// problem changes.
type changeLog struct {
	mu   sync.Mutex
	last string
	at   time.Time
}

func (c *changeLog) allow(problem string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if problem == c.last && now.Sub(c.at) < logEvery {
		return false
	}
	c.last, c.at = problem, now
	return true
}

// clear forgets the last problem: the settings fit again.
func (c *changeLog) clear() {
	c.mu.Lock()
	c.last = ""
	c.mu.Unlock()
}

func (h *health) isDown() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.downSince.IsZero()
}

// probingNow reports whether a probe runs.
func (h *health) probingNow() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.probing
}

// failCount is the number of failed probes so far.
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
}

// refreshConfig starts the probe, which also fetches the room's gate
// settings, when the settings are older than configTTL, or every
// downProbeEvery while waitingroom is down. The request does not wait.
func (g *Gate) refreshConfig() {
	h := g.health
	h.mu.Lock()
	every := configTTL
	if !h.downSince.IsZero() {
		every = downProbeEvery
	}
	due := h.lastProbe.IsZero() || g.now().Sub(h.lastProbe) >= every
	h.mu.Unlock()
	if due {
		g.probe()
	}
}

// suspect starts a probe after a request's call failed, unless one runs
// or one started less than suspectGap ago, or waitingroom is down already
// (then refreshConfig probes every downProbeEvery).
func (g *Gate) suspect() {
	h := g.health
	h.mu.Lock()
	due := h.downSince.IsZero() && g.now().Sub(h.lastProbe) >= suspectGap
	h.mu.Unlock()
	if due {
		g.probe()
	}
}

// probe runs in the background unless a probe runs: it fetches the room's
// gate settings until waitingroom answers (up), or until probeFails
// fetches in a row have failed, probeGap apart (down). While down, one
// fetch per probe.
func (g *Gate) probe() {
	h := g.health
	h.mu.Lock()
	if h.probing {
		h.mu.Unlock()
		return
	}
	h.probing, h.lastProbe = true, g.now()
	h.mu.Unlock()
	go func() {
		for {
			open, known, reachable := g.fetchConfig(context.Background())
			if known {
				g.cfg.mu.Lock()
				g.cfg.known, g.cfg.failOpen = true, open
				g.cfg.mu.Unlock()
			}
			h.mu.Lock()
			if reachable {
				if !h.downSince.IsZero() {
					g.log.Info("gate: waitingroom is back")
				}
				h.streak, h.downSince, h.probing = 0, time.Time{}, false
				h.mu.Unlock()
				return
			}
			h.streak++
			h.fails++
			if h.streak >= probeFails && h.downSince.IsZero() {
				h.downSince = g.now()
				g.log.Warn("gate: waitingroom is down", "failedProbes", h.streak)
			}
			if !h.downSince.IsZero() {
				h.probing = false
				h.mu.Unlock()
				return
			}
			h.mu.Unlock()
			time.Sleep(g.probeGap)
		}
	}()
}

// fetchConfig reads the room's failOpen, and logs an error when the room
// does not fit this gate (see checkSetup). reachable is false only when
// waitingroom did not answer (a transport error, a timeout, a 5xx); known
// is false when failOpen could not be read.
func (g *Gate) fetchConfig(ctx context.Context) (failOpen, known, reachable bool) {
	a, err := g.call(ctx, "gate settings", http.MethodGet, "/api/rooms/"+url.PathEscape(g.opts.Room)+"/gate", nil, false, slotNone)
	if err != nil {
		return false, false, false
	}
	var cfg struct {
		FailOpen *bool  `json:"failOpen"`
		Audience string `json:"audience"`
	}
	if a.status == http.StatusOK && json.Unmarshal(a.body, &cfg) == nil && cfg.FailOpen != nil {
		g.checkSetup(a, cfg.Audience)
		return *cfg.FailOpen, true, true
	}
	if !g.checkSetup(a, "") {
		_ = g.refused("gate settings", a)
	}
	return false, false, true
}

// checkSetup logs an error, at once when the problem is new and then once
// a minute, when the room's gate settings a do not fit this gate: a room
// audience (its targetURL's origin) other than Options.Audience, as both
// are normalised (then every pass is refused as "not valid"), a room
// without a targetURL (404 gate_off) or no such room (404
// room_not_found). It reports whether a was such a problem.
func (g *Gate) checkSetup(a answer, audience string) bool {
	var problem, msg string
	var args []any
	switch {
	case a.status == http.StatusNotFound && a.code == "gate_off":
		problem, msg = "gate_off", "gate: the room has no targetURL (gate off): it sends no buyer to this shop and passes cannot be redeemed; set the room's Target URL in the console"
	case a.status == http.StatusNotFound && a.code == "room_not_found":
		problem, msg = "room_not_found", "gate: the room does not exist at RoomURL; check Options.Room and Options.RoomURL"
		args = []any{"roomURL", g.base}
	case a.status != http.StatusOK:
		return false
	case audience == "":
		// A waitingroom that does not say its audience: nothing to compare.
	default:
		aud, err := parseOrigin(audience)
		if err != nil {
			aud = audience
		}
		if aud != g.opts.Audience {
			problem = "audience " + aud
			msg = "gate: the room's audience (its targetURL's origin) is not Options.Audience: every pass will be refused as not valid; make them equal"
			args = []any{"roomAudience", aud, "audience", g.opts.Audience}
		}
	}
	if problem == "" {
		g.health.setup.clear()
		return false
	}
	if g.health.setup.allow(problem, g.now()) {
		g.log.Error(msg, args...)
	}
	return true
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

// failed answers a request whose call to waitingroom failed: the fail mode
// when the probe found waitingroom down, else "please retry" for this
// request alone (a refused call, every call slot taken, or a failure the
// probe has not confirmed). It never fails open for a refusal.
func (g *Gate) failed(w http.ResponseWriter, r *http.Request, next http.Handler, err error, re *repost) {
	if g.health.isDown() {
		g.fail(w, r, next, err, re)
		return
	}
	if g.health.reqLog.allow(g.now()) {
		g.log.Warn("gate: a call to waitingroom failed; the request fails closed", "err", err)
	}
	g.page(w, r, http.StatusServiceUnavailable, pageRetry, re)
}

// fail answers a request that needs waitingroom while it is down: through
// to next when failing open, else the "please retry" page (with the retry
// form re when not nil). It logs at most once a minute.
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
