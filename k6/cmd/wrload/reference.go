package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/r3labs/sse/v2"
)

// referenceCommand serves r3labs/sse with its defaults, the reference
// the waiting room's stream is measured against: one stream, one event
// per tick to every subscriber, at the same path and with the same payload shape as the
// waiting room's stream, so that `waitingroom soak` measures both alike.
// It is a measuring stick, never a way to run a room.
func referenceCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sse-reference", flag.ContinueOnError)
	addr := fs.String("listen", "127.0.0.1:18450", "loopback address")
	tick := fs.Duration("tick", time.Second, "event period")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return errors.New("sse-reference: loopback only")
	}
	s := sse.New() // the defaults: AutoReplay on, a 64-slot buffer per subscriber, blocking sends
	s.CreateStream("room")
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /r/{room}/events", func(w http.ResponseWriter, r *http.Request) {
		r.URL.RawQuery = "stream=room"
		s.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		t := time.NewTicker(*tick)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				srv.Close()
				return
			case <-t.C:
			}
			data := `{"status":"WAITING","rank":` + strconv.Itoa(15000-n) + `,"ticket":15000,"currentTotalWaitingCount":15000,` +
				`"estimatedWaitSeconds":300,"pollingIntervalSeconds":5,"entryToken":null,"soldOut":false,"t":` +
				strconv.FormatInt(time.Now().UnixMicro(), 10) + `}`
			s.Publish("room", &sse.Event{Event: []byte("position"), Data: []byte(data)})
		}
	}()
	fmt.Fprintf(stdout, "r3labs/sse reference on %s\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
