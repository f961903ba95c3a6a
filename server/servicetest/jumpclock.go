package servicetest

import (
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
)

// JumpClock is the real clock moved ahead by the jumps a test makes: its
// time runs on with the machine's, and Jump skips a stretch of it at
// once. Its timers and tickers are the real ones, so a served process on
// it keeps its pace: loops tick as often as ever and find, at their next
// tick, that the time jumped. It is for tests of a whole server whose
// sale waits for openings and absences of minutes.
type JumpClock struct {
	clockwork.Clock
	ahead atomic.Int64 // ns
}

// NewJumpClock returns a JumpClock not ahead of the real clock yet.
func NewJumpClock() *JumpClock { return &JumpClock{Clock: clockwork.NewRealClock()} }

// Now returns the real time plus every jump so far.
func (c *JumpClock) Now() time.Time { return time.Now().Add(c.Ahead()) }

// Since returns the time elapsed since t on this clock.
func (c *JumpClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Until returns the time until t on this clock.
func (c *JumpClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// Jump moves the clock d ahead at once.
func (c *JumpClock) Jump(d time.Duration) { c.ahead.Add(int64(d)) }

// Ahead returns how far the clock is ahead of the real one.
func (c *JumpClock) Ahead() time.Duration { return time.Duration(c.ahead.Load()) }
