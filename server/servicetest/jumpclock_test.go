package servicetest

import (
	"testing"
	"time"
)

// TestJumpClock: the clock runs with the real one and is ahead by the sum
// of its jumps; its timers keep real time.
func TestJumpClock(t *testing.T) {
	c := NewJumpClock()
	for _, tt := range []struct {
		jump, ahead time.Duration
	}{{0, 0}, {time.Minute, time.Minute}, {30 * time.Second, 90 * time.Second}} {
		c.Jump(tt.jump)
		before := time.Now()
		got := c.Now()
		after := time.Now()
		if c.Ahead() != tt.ahead || got.Before(before.Add(tt.ahead)) || got.After(after.Add(tt.ahead)) {
			t.Fatalf("after a jump of %v: %v ahead, now %v; want %v ahead of [%v, %v]", tt.jump, c.Ahead(), got, tt.ahead, before, after)
		}
		if d := c.Until(got.Add(time.Hour)); d > time.Hour || d < time.Hour-time.Second {
			t.Fatalf("Until an hour ahead: %v", d)
		}
	}
	select {
	case <-c.After(time.Millisecond): // a real timer: 1 ms, not an hour of jumps
	case <-time.After(10 * time.Second):
		t.Fatal("the clock's timer did not fire on real time")
	}
}
