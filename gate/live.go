package gate

import (
	"context"
	"errors"
	"sync"
	"time"
)

// maxLiveEntries bounds the session liveness cache.
const maxLiveEntries = 100_000

// liveEntry is what the gate last learned about one session.
type liveEntry struct {
	info     Session // as waitingroom last described it
	live     bool
	answered bool          // waitingroom has answered about it at least once
	until    time.Time     // the answer holds until then
	inflight chan struct{} // closed when the running renew ends; nil when none runs
	failed   time.Time     // waitingroom could not answer; no new renew before this
}

// liveCache maps session ids to liveEntry, with at most max entries.
type liveCache struct {
	mu  sync.Mutex
	m   map[string]*liveEntry
	max int
}

func newLiveCache(max int) *liveCache {
	return &liveCache{m: make(map[string]*liveEntry), max: max}
}

// entry returns id's entry, adding one (and evicting others when full).
// The caller holds mu.
func (c *liveCache) entry(id string, now time.Time) *liveEntry {
	if e := c.m[id]; e != nil {
		return e
	}
	if len(c.m) >= c.max {
		c.evict(now)
	}
	e := &liveEntry{}
	c.m[id] = e
	return e
}

// evict drops stale entries, then arbitrary ones, down to 90% of max.
// The caller holds mu.
func (c *liveCache) evict(now time.Time) {
	for id, e := range c.m {
		if e.inflight == nil && now.After(e.until) && now.After(e.failed) {
			delete(c.m, id)
		}
	}
	for id, e := range c.m { // map order is random: random eviction
		if len(c.m) < c.max*9/10 {
			break
		}
		if e.inflight == nil {
			delete(c.m, id)
		}
	}
}

// remember records an answer about id.
func (c *liveCache) remember(id string, info Session, live bool, until, now time.Time) {
	c.mu.Lock()
	e := c.entry(id, now)
	e.info, e.live, e.answered, e.until, e.failed = info, live, true, until, time.Time{}
	c.mu.Unlock()
}

// len reports the number of entries (for tests).
func (c *liveCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

// checkSession reports whether the session is live (with what is known of
// it): nil, errSessionGone, or an errUnavailable error. It renews the
// session at waitingroom at most once per RenewEvery (and when its known
// expiry passes); in between, and while one renew of it runs, it answers
// from the cache.
func (g *Gate) checkSession(ctx context.Context, id string) (Session, error) {
	for attempt := 0; ; attempt++ {
		now := g.now()
		c := g.live
		c.mu.Lock()
		e := c.entry(id, now)
		info := e.info
		if e.answered && now.Before(e.until) {
			live := e.live
			c.mu.Unlock()
			if live {
				return info, nil
			}
			return Session{}, errSessionGone
		}
		if now.Before(e.failed) {
			c.mu.Unlock()
			return Session{}, errUnavailable // a renew just failed: do not wait for another timeout
		}
		if ch := e.inflight; ch != nil {
			wasLive := e.answered && e.live
			c.mu.Unlock()
			if wasLive {
				return info, nil // live at the last renew; another request renews it now
			}
			if attempt > 0 {
				return Session{}, errUnavailable
			}
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return Session{}, errUnavailable
			}
		}
		ch := make(chan struct{})
		e.inflight = ch
		c.mu.Unlock()

		s, err := g.renew(ctx, id)
		after := g.now()
		c.mu.Lock()
		e.inflight = nil
		close(ch)
		switch {
		case err == nil:
			e.info, e.live, e.answered, e.until = s.public(), true, true, g.freshUntil(after, s)
			info = e.info
		case errors.Is(err, errSessionGone):
			e.live, e.answered, e.until = false, true, after.Add(g.opts.RenewEvery)
		default:
			e.failed = after.Add(downProbeEvery)
		}
		c.mu.Unlock()
		return info, err
	}
}

// freshUntil is how long an answer that s is live holds: RenewEvery, but
// never past the session's known expiry.
func (g *Gate) freshUntil(now time.Time, s session) time.Time {
	until := now.Add(g.opts.RenewEvery)
	if !s.ExpiresAt.IsZero() && s.ExpiresAt.Before(until) {
		until = s.ExpiresAt
	}
	if floor := now.Add(time.Second); until.Before(floor) {
		until = floor // a skewed clock must not turn every request into a renew
	}
	return until
}
