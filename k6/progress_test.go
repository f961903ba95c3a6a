package k6

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestEvery: the report comes every interval until stop, and never after
// it; on the fake clock of a synctest bubble, exactly once an interval.
func TestEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = 10 * time.Millisecond
		var n atomic.Int64
		stop := every(interval, func() { n.Add(1) })
		time.Sleep(3*interval + interval/2)
		synctest.Wait()
		if got := n.Load(); got != 3 {
			t.Fatalf("%d reports in 3.5 intervals, want 3", got)
		}
		stop()
		time.Sleep(3 * interval)
		synctest.Wait()
		if got := n.Load(); got != 3 {
			t.Fatalf("%d reports, want 3: a report came after stop", got)
		}
		stop() // twice is harmless
	})
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
