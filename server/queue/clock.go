package queue

import (
	"strconv"
	"time"
)

// SetClock makes the scripts decide by now instead of Redis' TIME: the
// schedule's phases, the admission rate's credit, pass expiries, absences,
// gate sessions and wait slots. nil, the default, is Redis' own clock,
// which every instance of a deployment shares, so that the rate is one
// global rate whatever the instances' clocks say. A clock of its own is for
// tests that move time instead of waiting for it. Set it before the engine
// is used.
func (e *Engine) SetClock(now func() time.Time) { e.now = now }

// clockArg is the last argument of every script call: the clock's time in
// microseconds, or "" for Redis' TIME.
func (e *Engine) clockArg() string {
	if e.now == nil {
		return ""
	}
	return strconv.FormatInt(e.now().UnixMicro(), 10)
}

// wallNow is the engine's clock in Go, for the times it writes itself (a
// room's creation).
func (e *Engine) wallNow() time.Time {
	if e.now == nil {
		return time.Now()
	}
	return e.now()
}
