package web

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestIPLimiterTake: concurrent takes never pass more than the burst; a
// token given back is taken again, and giving back never lifts a bucket
// above its burst.
func TestIPLimiterTake(t *testing.T) {
	tests := []struct {
		name                string
		burst, concurrent   int
		giveBack, wantAfter int
	}{
		{"a crowd of 50 on a burst of 5", 5, 50, 0, 0},
		{"one given back is one more", 5, 50, 1, 1},
		{"all given back are the burst again", 5, 5, 5, 5},
		{"one taken, given back thrice: still the burst", 5, 1, 3, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newIPLimiter(0.001, tc.burst)
			var passed atomic.Int64
			var backs []func()
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range tc.concurrent {
				wg.Go(func() {
					if ok, back := l.take("203.0.113.7"); ok {
						passed.Add(1)
						mu.Lock()
						backs = append(backs, back)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			if want := int64(min(tc.burst, tc.concurrent)); passed.Load() != want {
				t.Fatalf("%d of %d concurrent takes passed, want %d", passed.Load(), tc.concurrent, want)
			}
			for i := range tc.giveBack {
				backs[i%len(backs)]()
			}
			after := 0
			for range tc.burst + 3 {
				if ok, _ := l.take("203.0.113.7"); ok {
					after++
				}
			}
			if after != tc.wantAfter {
				t.Fatalf("%d takes passed after %d given back, want %d", after, tc.giveBack, tc.wantAfter)
			}
		})
	}
}
