package web

import (
	"sync"
	"time"
)

// failures counts each client's failed attempts over a sliding window: a
// client may fail at most max times in any window of length per. Clients
// quiet for a window are forgotten, so the map stays as small as the set
// of recent offenders.
type failures struct {
	max int
	per time.Duration

	mu    sync.Mutex
	byKey map[string][]time.Time // oldest first, at most max
	swept time.Time
}

func newFailures(max int, per time.Duration) *failures {
	return &failures{max: max, per: per, byKey: map[string][]time.Time{}, swept: time.Now()}
}

// blocked reports how long key must wait before its next attempt: 0 when
// it may try now.
func (f *failures) blocked(key string, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	ts := f.recentLocked(key, now)
	if len(ts) < f.max {
		return 0
	}
	return ts[0].Add(f.per).Sub(now)
}

// fail records one failed attempt by key.
func (f *failures) fail(key string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ts := f.recentLocked(key, now)
	if len(ts) == f.max {
		ts = ts[1:]
	}
	f.byKey[key] = append(ts, now)
}

// Attempt counts one attempt by key, as a failure until forgiven, unless
// key must wait: then it returns how long and counts nothing. Checking
// and counting under one lock, a burst of parallel attempts gets at most
// max through, where checking (blocked) before failing (fail) would let
// every one of them pass.
func (f *failures) Attempt(key string, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	ts := f.recentLocked(key, now)
	if len(ts) >= f.max {
		return ts[0].Add(f.per).Sub(now)
	}
	f.byKey[key] = append(ts, now)
	return 0
}

// Forgive takes back the attempt that Attempt counted at at: it
// succeeded, or was never made.
func (f *failures) Forgive(key string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ts := f.byKey[key]
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Equal(at) {
			ts = append(ts[:i:i], ts[i+1:]...)
			break
		}
	}
	if len(ts) == 0 {
		delete(f.byKey, key)
		return
	}
	f.byKey[key] = ts
}

// recentLocked returns key's failures within the window, dropping older
// ones, and forgets every quiet client once a window.
func (f *failures) recentLocked(key string, now time.Time) []time.Time {
	if now.Sub(f.swept) > f.per {
		for k, ts := range f.byKey {
			if now.Sub(ts[len(ts)-1]) > f.per {
				delete(f.byKey, k)
			}
		}
		f.swept = now
	}
	ts := f.byKey[key]
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= f.per {
		i++
	}
	return ts[i:]
}
