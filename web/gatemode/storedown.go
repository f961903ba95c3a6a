package gatemode

import (
	"sync"
	"time"
)

// storeDown tracks, in this process, whether Redis answers the gate: a
// failed call of the gate's handlers (check, enter, hand-off, redeem)
// marks it down, one that succeeds marks it up. The gate's check, which calls Redis only for a visitor with a
// session cookie, asks it to answer a visitor without one as the room's
// fail mode chose while Redis is away.
type storeDown struct {
	mu       sync.Mutex
	failedAt time.Time
	okAt     time.Time
}

// storeDownFor is how long a failure counts when no call succeeds since.
const storeDownFor = 10 * time.Second

// failed records a failed call at now.
func (d *storeDown) failed(now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failedAt = now
}

// ok records a call that succeeded at now.
func (d *storeDown) ok(now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.okAt = now
}

// down reports whether the last call failed, less than storeDownFor ago.
func (d *storeDown) down(now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return !d.failedAt.IsZero() && d.failedAt.After(d.okAt) && now.Sub(d.failedAt) < storeDownFor
}
