// Package loop runs the periodic work of an instance (admission ticks,
// flushes, polls, decisions) on an injected clock.
package loop

import (
	"context"
	"time"

	"github.com/jonboulle/clockwork"
)

// Every calls f once first after the start, and then on every multiple of
// d after that first call was due, until ctx is done; it returns ctx's
// error. A call that runs past one or more multiples skips them: the next
// call is at the next multiple still ahead (a time.Ticker would deliver
// one of the missed ticks at once). No call starts once ctx is done.
//
// Between calls the loop waits on one timer of clk, armed only while it
// waits: on a clockwork.FakeClock, BlockUntilContext(ctx, n) returns once
// n such loops have finished their call and wait for the next, which is
// how a test that advances the clock knows the calls it caused are done.
func Every(ctx context.Context, clk clockwork.Clock, first, d time.Duration, f func(context.Context)) error {
	if d <= 0 {
		panic("loop: non-positive interval")
	}
	next := clk.Now().Add(first)
	t := clk.NewTimer(first)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.Chan():
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		f(ctx)
		now := clk.Now()
		next = next.Add(d)
		if !next.After(now) {
			next = next.Add((now.Sub(next)/d + 1) * d)
		}
		t.Reset(next.Sub(now))
	}
}
