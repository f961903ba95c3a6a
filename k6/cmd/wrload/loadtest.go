package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"waitingroom/k6"
)

// loadtestCommand drives a closed-loop HTTP load at a loopback URL, or
// serves the hello-world ceiling server that loads are compared with.
func loadtestCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	var l k6.Load
	fs.StringVar(&l.URL, "url", "", "target URL (loopback only)")
	fs.StringVar(&l.Method, "method", "POST", "HTTP method")
	fs.IntVar(&l.Concurrency, "c", 64, "concurrent workers")
	fs.DurationVar(&l.Duration, "d", 10*time.Second, "duration (at most 10m)")
	fs.IntVar(&l.MaxRequests, "n", 0, "stop after this many requests (0: duration only)")
	label := fs.String("label", "load", "name printed with the result")
	hello := fs.String("serve-hello", "", "serve the hello-world ceiling on this loopback address instead of loading")
	expect, maxUnexpected := checkFlags(fs, "200")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	expected, err := k6.ParseStatuses(*expect)
	if err != nil {
		return fmt.Errorf("loadtest: -expect: %w", err)
	}
	if *hello != "" {
		return serveHello(ctx, *hello)
	}
	if l.URL == "" {
		return errors.New("loadtest: -url is required")
	}
	res, err := l.Run(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d requests in %v = %.0f req/s, p50 %v, p99 %v, errors %d, status %v\n",
		*label, res.Requests, res.Elapsed.Round(time.Millisecond), res.RPS(),
		res.Percentile(50).Round(time.Microsecond), res.Percentile(99).Round(time.Microsecond), res.Errors, res.Status)
	return k6.CheckStatus("loadtest "+*label, res.Status, res.Errors, expected, *maxUnexpected)
}

func serveHello(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("loadtest: listen %s: %w", addr, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return fmt.Errorf("loadtest: %s is not a loopback address", addr)
	}
	srv := &http.Server{Handler: k6.HelloHandler(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
