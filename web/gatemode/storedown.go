package gatemode

import (
	"sync/atomic"
	"time"
)

// storeDown tracks, in this process, whether Redis answers the gate: a
// failed call of the gate's handlers (check, enter, hand-off, redeem)
// marks it down, one that succeeds marks it up. The gate's check, which calls Redis only for a visitor with a
// session cookie, asks it to answer a visitor without one as the room's
// fail mode chose while Redis is away. Every check writes it, so it takes
// no lock: each time is a Unix nanosecond count (0 for never).
type storeDown struct {
	failedAt atomic.Int64
	okAt     atomic.Int64
}

// storeDownFor is how long a failure counts when no call succeeds since.
const storeDownFor = 10 * time.Second

// failed records a failed call at now.
func (d *storeDown) failed(now time.Time) {
	d.failedAt.Store(now.UnixNano())
}

// ok records a call that succeeded at now.
func (d *storeDown) ok(now time.Time) {
	d.okAt.Store(now.UnixNano())
}

// down reports whether the last call failed, less than storeDownFor ago.
func (d *storeDown) down(now time.Time) bool {
	failed := d.failedAt.Load()
	return failed != 0 && failed > d.okAt.Load() && now.UnixNano()-failed < int64(storeDownFor)
}
