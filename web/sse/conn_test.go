package sse

import (
	"strings"
	"syscall"
	"testing"
)

func TestAppendChunk(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		want    string
	}{
		{"empty", "", "0000\r\n\r\n"},
		{"short", "data: x\n\n", "0009\r\ndata: x\n\n\r\n"},
		{"255", strings.Repeat("a", 255), "00ff\r\n" + strings.Repeat("a", 255) + "\r\n"},
		{"too big for 4 digits", strings.Repeat("b", 1<<16), "10000\r\n" + strings.Repeat("b", 1<<16) + "\r\n"},
	}
	for _, tt := range tests {
		got := string(appendChunk([]byte("prefix"), func(b []byte) []byte { return append(b, tt.payload...) }))
		if got != "prefix"+tt.want {
			t.Errorf("%s: got %q", tt.name, got[:min(len(got), 40)])
		}
	}
}

// TestSilentPeersTimeOut: a stream's sent data may stay unacknowledged
// for peerSilence, not TCP's quarter of an hour.
func TestSilentPeersTimeOut(t *testing.T) {
	srv, _ := tcpPair(t)
	c := newConn(srv)
	var got int
	var err error
	c.raw.Control(func(fd uintptr) { got, err = syscall.GetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout) })
	if err != nil || got != int(peerSilence.Milliseconds()) {
		t.Fatalf("TCP_USER_TIMEOUT %d ms (%v), want %d", got, err, peerSilence.Milliseconds())
	}
}
