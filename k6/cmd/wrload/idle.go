package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"waitingroom/k6"
)

// idleCommand holds a server on its embedded stores (as make run does)
// with N rooms and no visitors, and samples its CPU and RSS every
// interval: an idle demo must stay idle however long it runs.
func idleCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("idle", flag.ContinueOnError)
	bin := fs.String("bin", "bin/waitingroom", "the server binary")
	addr := fs.String("addr", "127.0.0.1:18600", "the server's listen address (its metrics and pprof take the next two ports)")
	rooms := fs.Int("rooms", 20, "rooms to create")
	duration := fs.Duration("duration", 2*time.Hour, "how long to hold the server")
	every := fs.Duration("every", time.Minute, "sampling interval")
	warmup := fs.Duration("warmup", 2*time.Minute, "start-up time left out of the verdict")
	window := fs.Duration("window", 30*time.Minute, "the first and last windows the verdict compares")
	csvPath := fs.String("csv", "", "write the samples to this CSV file too")
	logPath := fs.String("log", "", "the server's log (default: discarded)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *rooms < 1 || *rooms > 1000:
		return errors.New("idle: -rooms out of 1..1000")
	case *duration < time.Minute || *duration > 24*time.Hour:
		return errors.New("idle: -duration out of 1m..24h")
	case *every < time.Second || *every > *duration:
		return errors.New("idle: -every out of 1s..duration")
	}
	host, portStr, err := net.SplitHostPort(*addr)
	port, perr := strconv.Atoi(portStr)
	if err != nil || perr != nil || port < 1 || port > 65533 {
		return fmt.Errorf("idle: -addr %q is not host:port", *addr)
	}
	const token = "idle-admin-token-0123456789abcdef0123"
	var out io.Writer = io.Discard
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			return fmt.Errorf("idle: %w", err)
		}
		defer f.Close()
		out = f
	}
	srv, err := serveProcess(*bin, []string{"REDIS_URL=", "DATABASE_URL=",
		"LISTEN_ADDR=" + *addr, "METRICS_ADDR=" + host + ":" + strconv.Itoa(port+1), "DEBUG_ADDR=" + host + ":" + strconv.Itoa(port+2),
		"ADMIN_TOKEN=" + token, "SECRET_KEY=idle-secret-key-0123456789abcdef"}, out)
	if err != nil {
		return fmt.Errorf("idle: %w", err)
	}
	defer srv.stop()
	exited := srv.exited
	base := "http://" + *addr
	if err := waitHealthy(ctx, base+"/healthz", exited); err != nil {
		return fmt.Errorf("idle: %w", err)
	}
	for i := range *rooms {
		name := fmt.Sprintf("idle%02d", i+1)
		if err := k6.PutRoom(ctx, base, name, token, map[string]any{"title": "idle " + name, "rate": 5}); err != nil {
			return fmt.Errorf("idle: %w", err)
		}
	}
	var csv io.Writer = io.Discard
	if *csvPath != "" {
		if err := os.MkdirAll(filepath.Dir(*csvPath), 0o755); err != nil {
			return fmt.Errorf("idle: %w", err)
		}
		f, err := os.Create(*csvPath)
		if err != nil {
			return fmt.Errorf("idle: %w", err)
		}
		defer f.Close()
		csv = f
	}
	fmt.Fprintln(csv, "minute,cpu_pct,rss_mib")
	fmt.Fprintf(stdout, "== idle: %s, %d rooms, embedded stores, %v sampled every %v, %s, %d cores\n",
		*bin, *rooms, *duration, *every, time.Now().UTC().Format(time.RFC3339), runtime.NumCPU())
	fmt.Fprintf(stdout, "%8s %10s %9s\n", "minute", "cpu%core", "rss MiB")
	pid := srv.cmd.Process.Pid
	start := time.Now()
	prev, err := k6.ReadProcUsage(pid)
	if err != nil {
		return fmt.Errorf("idle: %w", err)
	}
	prevAt := start
	var samples []k6.IdleSample
	tick := time.NewTicker(*every)
	defer tick.Stop()
	for time.Since(start) < *duration {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-exited:
			exited <- err
			return fmt.Errorf("idle: the server exited after %v: %v", time.Since(start).Round(time.Second), err)
		case now := <-tick.C:
			cur, err := k6.ReadProcUsage(pid)
			if err != nil {
				return fmt.Errorf("idle: %w", err)
			}
			s := k6.IdleSampleOf(now.Sub(start), prev, cur, now.Sub(prevAt))
			prev, prevAt = cur, now
			samples = append(samples, s)
			min := s.At.Minutes()
			fmt.Fprintf(stdout, "%8.1f %10.2f %9.1f\n", min, s.CPUPct, float64(s.RSS)/(1<<20))
			fmt.Fprintf(csv, "%.2f,%.3f,%.2f\n", min, s.CPUPct, float64(s.RSS)/(1<<20))
		}
	}
	v, err := k6.JudgeIdle(samples, *warmup, *window)
	if err != nil {
		return err
	}
	if !v.Flat {
		return fmt.Errorf("idle: NOT FLAT: %s", v.Why)
	}
	fmt.Fprintf(stdout, "FLAT: %s\n", v.Why)
	return nil
}

// waitHealthy waits up to 30 s for url to answer 200, or for the server to
// exit.
func waitHealthy(ctx context.Context, url string, exited chan error) error {
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("the server exited at start: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("%s did not answer in 30 s", url)
}
