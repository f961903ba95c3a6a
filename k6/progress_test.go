package k6

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestEvery: the report comes every interval until stop, never after it.
func TestEvery(t *testing.T) {
	var n atomic.Int64
	stop := every(10*time.Millisecond, func() { n.Add(1) })
	time.Sleep(105 * time.Millisecond)
	stop()
	got := n.Load()
	if got < 5 || got > 11 {
		t.Fatalf("%d reports in 105 ms at 10 ms, want about 10", got)
	}
	time.Sleep(30 * time.Millisecond)
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
