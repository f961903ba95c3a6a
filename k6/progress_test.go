package k6

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestEvery: the report comes every interval until stop, never more often
// and never after it. A loaded machine may delay reports, so the test waits
// for three of them (bounded) rather than counting them in a fixed time.
func TestEvery(t *testing.T) {
	const interval = 10 * time.Millisecond
	var n atomic.Int64
	start := time.Now()
	stop := every(interval, func() { n.Add(1) })
	for deadline := time.Now().Add(5 * time.Second); n.Load() < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("%d reports in 5 s at %v, want 3 at least", n.Load(), interval)
		}
	}
	stop()
	elapsed := time.Since(start)
	got := n.Load()
	if most := int64(elapsed/interval) + 1; got > most {
		t.Fatalf("%d reports in %v at %v, want at most %d", got, elapsed, interval, most)
	}
	time.Sleep(3 * interval)
	if n.Load() != got {
		t.Fatal("a report came after stop")
	}
	stop() // twice is harmless
}

// TestPrefixLines: lines split over writes come out whole, each behind
// the prefix.
func TestPrefixLines(t *testing.T) {
	var b strings.Builder
	p := &prefixLines{mu: &sync.Mutex{}, w: &b, prefix: "child 1: "}
	for _, chunk := range []string{"soak ho", "lding\nsoak", " holding\n", "partial"} {
		p.Write([]byte(chunk))
	}
	if want := "child 1: soak holding\nchild 1: soak holding\n"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}
