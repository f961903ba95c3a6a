package console

import (
	"fmt"
	"testing"
	"time"
)

func TestSSEData(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "data: \n\n"},
		{"<p>a</p>", "data: <p>a</p>\n\n"},
		{"a\nb", "data: a\ndata: b\n\n"},
		{"a\r\nb\rc\n", "data: a\ndata: b\ndata: c\ndata: \n\n"},
	}
	for _, tt := range tests {
		if got := string(sseData([]byte(tt.in))); got != tt.want {
			t.Errorf("sseData(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFrameCache(t *testing.T) {
	var c frameCache
	now := time.Now().Truncate(time.Second).Add(900 * time.Millisecond)
	c.put("en r", []byte("x"), now)
	if b, ok := c.get("en r", now.Add(99*time.Millisecond)); !ok || string(b) != "x" {
		t.Fatal("a fresh frame is not shared")
	}
	if _, ok := c.get("en r", now.Add(100*time.Millisecond)); ok {
		t.Fatal("the frame of the last second is shared in the next")
	}
	if _, ok := c.get("ko r", now); ok {
		t.Fatal("a frame is shared across languages")
	}
	for i := range maxFrames + 10 {
		c.put(fmt.Sprint("en ", i), []byte("y"), now)
	}
	if len(c.m) != maxFrames {
		t.Fatalf("%d frames kept, want at most %d", len(c.m), maxFrames)
	}
	c.put("en new", []byte("z"), now.Add(time.Second)) // the stale ones make room
	if len(c.m) != 1 {
		t.Fatalf("%d frames after the sweep, want 1", len(c.m))
	}
}
