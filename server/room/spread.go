package room

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"
)

// The spread of a tick's ready events: the buyers one tick lets
// in are told their turn at random moments over readySpreadMs, so that they
// do not reach the order page in the same millisecond. It protects an order
// path that cannot take a tick's whole batch at once; 0 sends every turn at
// once; unset (nil) follows the server's default, 80% of TICK.

// MaxReadySpreadMs bounds readySpreadMs whatever the tick: a turn told more
// than 10 s late would be a turn lost.
const MaxReadySpreadMs = 10000

// MaxReadySpread returns the highest readySpreadMs a server whose
// admission period is tick accepts: one tick, at most MaxReadySpreadMs
// (MaxReadySpreadMs for a tick of 0 or less, which is unknown).
func MaxReadySpread(tick time.Duration) int {
	if ms := tick.Milliseconds(); tick > 0 && ms < MaxReadySpreadMs {
		return int(ms)
	}
	return MaxReadySpreadMs
}

// readySpreadError names readySpreadMs and its bounds, max being the
// highest value.
func readySpreadError(max int) error {
	return fieldError("readySpreadMs", "readySpreadMs must be null (the server's default), 0 (no spread) or between 1 and %d milliseconds", max)
}

// validateReadySpread bounds ms by MaxReadySpreadMs; the tick is the
// server's (ValidateReadySpread).
func validateReadySpread(ms *int) error {
	if ms != nil && (*ms < 0 || *ms > MaxReadySpreadMs) {
		return readySpreadError(MaxReadySpreadMs)
	}
	return nil
}

// ValidateReadySpread returns an error naming readySpreadMs when it is set
// above one tick of a server whose admission period is tick (see
// MaxReadySpread), or out of Validate's bounds. Validate cannot check
// the tick, which is the server's and may change between restarts: a
// write checks it when it changes the setting.
func (s Settings) ValidateReadySpread(tick time.Duration) error {
	if max := MaxReadySpread(tick); s.ReadySpreadMs != nil && (*s.ReadySpreadMs < 0 || *s.ReadySpreadMs > max) {
		return readySpreadError(max)
	}
	return nil
}

// SameReadySpread reports whether a and b are the same readySpreadMs: both
// unset, or both set to the same value.
func SameReadySpread(a, b *int) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}

// ReadySpreadPatch is a patch of Settings.ReadySpreadMs: absent keeps it,
// null sets it back to the server's default, a whole number of
// milliseconds sets it.
type ReadySpreadPatch struct {
	// Set reports that the patch had the field; Ms is its value, nil for
	// null.
	Set bool
	Ms  *int
}

// UnmarshalJSON reads null or a whole number.
func (p *ReadySpreadPatch) UnmarshalJSON(b []byte) error {
	p.Set = true
	if bytes.Equal(b, []byte("null")) {
		p.Ms = nil
		return nil
	}
	var ms int
	if err := json.Unmarshal(b, &ms); err != nil {
		return errors.New("readySpreadMs must be null (the server's default) or a whole number of milliseconds")
	}
	p.Ms = &ms
	return nil
}

func (p ReadySpreadPatch) apply(ms *int) *int {
	if !p.Set {
		return ms
	}
	if p.Ms == nil {
		return nil
	}
	v := *p.Ms
	return &v
}
