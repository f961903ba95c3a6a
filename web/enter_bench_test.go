package web

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/visitor"
	"waitingroom/web/sse"
)

// discardWriter is a ResponseWriter that keeps only the status: the
// benchmark measures the handlers, not a recorder.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }

// BenchmarkEnterHandler measures the server's handler chain for an enter
// of a new visitor (POST /api/rooms/{room}/queue without a cookie), from
// the outermost middleware to the answer, against the real Redis; the
// HTTP server's own reading and writing are left out (issue 16).
func BenchmarkEnterHandler(b *testing.B) {
	rdb := servicetest.Redis(b)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(b, rdb)
	if err := eng.SaveRoom(context.Background(), name, room.Defaults(name)); err != nil {
		b.Fatal(err)
	}
	signer, err := visitor.NewSigner([]byte("test-secret-key-0123456789"))
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	metrics := NewMetrics()
	hub := newHub(eng, sse.Options{}, metrics, log)
	b.Cleanup(hub.Close)
	s, err := New(Options{Queue: eng, Rooms: eng, Orders: embeddedOrders(b, eng, log), Signer: signer, Metrics: metrics, Log: log, Hub: hub,
		Health:         func(ctx context.Context) error { return rdb.Ping(ctx).Err() },
		EnterRatePerIP: 1e9, EnterBurstPerIP: 1e9})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Handler()
	b.ReportAllocs()
	b.SetParallelism(32) // enters arrive together, as in a sale: they batch
	cpu0 := processCPU(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := httptest.NewRequest("POST", "/api/rooms/"+name+"/queue", nil)
			r.RemoteAddr = "192.0.2.1:1234"
			w := &discardWriter{h: http.Header{}}
			h.ServeHTTP(w, r)
			if w.code != http.StatusOK {
				b.Errorf("enter answered %d", w.code)
				return
			}
		}
	})
	// This process's CPU an enter, Redis's own left out: wall time per
	// enter counts Redis too when it shares the cores.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU returns the user and system CPU time this process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
