package loop

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
)

// TestEvery: the calls fall on the first delay and then on every multiple
// of the interval after it; a call that runs past multiples skips them;
// the loop ends with its context.
func TestEvery(t *testing.T) {
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		first time.Duration
		// work is how far each call moves the clock while it runs, by
		// call number (none when left out).
		work    map[int]time.Duration
		advance []time.Duration
		want    []time.Duration // the calls' times, from start
	}{
		{"on the interval", 30 * time.Millisecond, nil,
			[]time.Duration{30 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond},
			[]time.Duration{30 * time.Millisecond, 130 * time.Millisecond, 230 * time.Millisecond}},
		{"nothing before the first delay", 50 * time.Millisecond, nil,
			[]time.Duration{49 * time.Millisecond, time.Millisecond, 99 * time.Millisecond, time.Millisecond},
			[]time.Duration{50 * time.Millisecond, 150 * time.Millisecond}},
		{"a long call skips what it missed", 0, map[int]time.Duration{1: 250 * time.Millisecond},
			[]time.Duration{50 * time.Millisecond, 100 * time.Millisecond},
			[]time.Duration{0, 300 * time.Millisecond, 400 * time.Millisecond}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fc := clockwork.NewFakeClockAt(start)
			ctx, cancel := context.WithCancel(context.Background())
			var (
				mu  sync.Mutex
				got []time.Duration
			)
			var wg sync.WaitGroup
			wg.Go(func() {
				err := Every(ctx, fc, tt.first, 100*time.Millisecond, func(context.Context) {
					mu.Lock()
					got = append(got, fc.Since(start))
					n := len(got)
					mu.Unlock()
					fc.Advance(tt.work[n])
				})
				if err != context.Canceled {
					t.Errorf("Every returned %v, want context.Canceled", err)
				}
			})
			parked, stop := context.WithTimeout(context.Background(), 10*time.Second)
			defer stop()
			for _, d := range tt.advance {
				if err := fc.BlockUntilContext(parked, 1); err != nil {
					t.Fatal("the loop never waited")
				}
				fc.Advance(d)
			}
			if err := fc.BlockUntilContext(parked, 1); err != nil {
				t.Fatal("the loop never waited")
			}
			cancel()
			wg.Wait()
			if len(got) != len(tt.want) {
				t.Fatalf("calls at %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("calls at %v, want %v", got, tt.want)
				}
			}
		})
	}
}
