package sse

import (
	"bytes"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"waitingroom/server/push"
	"waitingroom/server/queue"
)

// BenchmarkEventWrite measures what one event's write costs on loopback,
// the fan-out's unit of work: a full position event against a minimal
// one, and with TCP_NOTSENT_LOWAT set on the server's sockets. 256 streams are written in turn while readers
// drain them, as clients do; both sides share the machine, so sys-µs/op
// counts the kernel's work for the write and for its reader.
//
//	go test -run '^$' -bench EventWrite -benchtime 200000x ./web/sse/
func BenchmarkEventWrite(b *testing.B) {
	eta := int64(600)
	full := appendChunk(nil, func(buf []byte) []byte {
		p := queue.Position{Status: queue.StatusWaiting, Rank: 12345, Ticket: 23456, Waiting: 15000,
			EstimatedWaitSeconds: &eta, PollingIntervalSeconds: 5, Phase: queue.PhaseOpen, ServerTime: 1764590000000}
		return appendCountdownEvent(buf, 123456, p, 1764590000000000, push.Countdown{Every: 60, Pace: 4.5, After: 2 * time.Second, Span: 58 * time.Second})
	})
	small := appendChunk(nil, func(buf []byte) []byte {
		return append(buf, "id: 123456\nevent: p\ndata: {\"rank\":12345}\n\n"...)
	})
	for _, tc := range []struct {
		name    string
		payload []byte
		lowat   int
	}{
		{"full", full, 0},
		{"small", small, 0},
		{"full-notsent-lowat-16k", full, 16 << 10},
	} {
		b.Run(tc.name, func(b *testing.B) {
			conns := make([]*conn, 256)
			for i := range conns {
				srv, cli := tcpPair(b)
				if tc.lowat > 0 {
					raw, _ := srv.(*net.TCPConn).SyscallConn()
					raw.Control(func(fd uintptr) {
						syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, 25 /* TCP_NOTSENT_LOWAT */, tc.lowat)
					})
				}
				conns[i] = newConn(srv)
				go io.Copy(io.Discard, cli)
			}
			var before, after syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			b.ResetTimer()
			for i := range b.N {
				if err := conns[i%len(conns)].writeFramed(tc.payload); err != nil {
					time.Sleep(time.Millisecond) // a full socket: let its reader drain it
				}
			}
			b.StopTimer()
			syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			sys := time.Duration(after.Stime.Nano() - before.Stime.Nano())
			b.ReportMetric(float64(sys.Microseconds())/float64(b.N), "sys-µs/op")
			b.ReportMetric(float64(len(tc.payload)), "bytes/event")
			b.SetBytes(int64(len(tc.payload)))
			if !bytes.HasSuffix(tc.payload, []byte("\n\n\r\n")) {
				b.Fatal("not a framed event")
			}
		})
	}
}
