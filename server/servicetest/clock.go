package servicetest

import (
	"sync"
	"time"
)

// Clock is a fake clock for tests: it stands still until the test moves
// it, and is safe for concurrent use. Its Now is what components that
// take a clock (a func() time.Time) are given.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
