package sse

import (
	"io"
	"log/slog"
	"testing"
	"time"
)

// TestSweepBacksOff: a sweep of an address that freed nothing doubles the
// wait before the next one, up to sweepGoneMax; one that freed a slot
// brings it back to sweepGoneEvery.
func TestSweepBacksOff(t *testing.T) {
	hub := newHub(&fakeSource{}, Options{MaxPerIP: 1}, newMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(hub.Close)
	if !hub.takeIP("a") {
		t.Fatal("first slot refused")
	}
	every := func() time.Duration {
		hub.mu.Lock()
		defer hub.mu.Unlock()
		return hub.perIP["a"].every
	}
	tests := []struct {
		freed int
		want  time.Duration
	}{
		{0, 100 * time.Millisecond},
		{0, 200 * time.Millisecond},
		{0, 400 * time.Millisecond},
		{0, 800 * time.Millisecond},
		{0, time.Second},
		{0, time.Second},
		{1, sweepGoneEvery},
		{0, 100 * time.Millisecond},
	}
	for i, tc := range tests {
		hub.swept("a", tc.freed)
		if got := every(); got != tc.want {
			t.Fatalf("sweep %d (freed %d): next after %v, want %v", i+1, tc.freed, got, tc.want)
		}
	}
}
