package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/k6"
)

// soakCommand holds N visitors on a running server's room, over SSE or by
// polling like the seed, and reports what it cost the server and Redis.
func soakCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	var s k6.Soak
	fs.StringVar(&s.BaseURL, "url", "http://127.0.0.1:8080", "server base URL (loopback only)")
	fs.StringVar(&s.MetricsURL, "metrics-url", "", "the server's private metrics URL (its METRICS_ADDR; default "+k6.DefaultMetricsURL+")")
	fs.StringVar(&s.Room, "room", "demo", "room to wait in")
	fs.IntVar(&s.N, "n", 100, "visitors (at most 19000 per process)")
	fs.Float64Var(&s.Ramp, "ramp", 1000, "new visitors per second")
	fs.DurationVar(&s.Hold, "hold", 20*time.Second, "how long to hold them once connected")
	fs.DurationVar(&s.Settle, "settle", 3*time.Second, "pause between the ramp and the measurement")
	fs.IntVar(&s.SourceIPs, "source-ips", 16, "spread connections over 127.0.0.1..127.0.0.N")
	fs.BoolVar(&s.Poll, "poll", false, "poll the position API like the seed's clients instead of SSE")
	fs.StringVar(&s.GCURL, "gc-url", "", "fetched before the memory figures are read: the server's DEBUG_ADDR /debug/pprof/heap?gc=1 collects its garbage first; with -procs 1")
	fs.BoolVar(&s.Widget, "widget", false, "hold embedded-widget viewers (/r/{room}/widget/events: no ticket) instead of waiting visitors")
	client := fs.String("client", "raw", "SSE client: raw (lean, one goroutine per stream) or r3labs")
	redisURL := fs.String("redis-url", "", "also report Redis-side INFO commandstats deltas of this Redis")
	procs := fs.Int("procs", 1, "child processes to spread the visitors over (one process holds at most 19,000)")
	child := fs.Bool("child", false, "run as a child process: print the raw report as JSON")
	fs.IntVar(&s.FirstIP, "first-ip", 0, "offset of the first source address")
	progress := progressFlag(fs)
	_, maxUnexpected := checkFlags(fs, "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkProgress("soak", *progress); err != nil {
		return err
	}
	s.Progress, s.ProgressEvery = stderr, *progress
	switch *client {
	case "raw":
	case "r3labs":
		s.R3labs = true
	default:
		return fmt.Errorf("soak: -client %q is neither raw nor r3labs", *client)
	}
	if *redisURL != "" {
		opt, err := redis.ParseURL(*redisURL)
		if err != nil {
			return fmt.Errorf("soak: -redis-url: %w", err)
		}
		rdb := redis.NewClient(opt)
		defer rdb.Close()
		s.RedisCalls = func(ctx context.Context) (int64, error) { return totalCalls(ctx, rdb) }
	}
	if *child {
		rep, err := s.Run(ctx)
		if err != nil {
			return err
		}
		return k6.EncodeReport(stdout, rep)
	}
	var rep k6.Report
	var err error
	if *procs > 1 {
		rep, err = soakChildren(ctx, s, *procs, *client, stdout, stderr)
	} else {
		rep, err = s.Run(ctx)
	}
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, rep.String())
	return rep.Check(*maxUnexpected)
}

// soakChildren spreads a soak over procs child processes. The parent
// measures the server side (RSS, commands) over the children's hold; the
// children's client-side figures are merged exactly.
func soakChildren(ctx context.Context, s k6.Soak, procs int, client string, stdout, stderr io.Writer) (k6.Report, error) {
	metricsURL := s.MetricsEndpoint()
	before, err := k6.ScrapeSoak(ctx, metricsURL)
	if err != nil {
		return k6.Report{}, err
	}
	per := (s.N + procs - 1) / procs
	ips := max(1, s.SourceIPs/procs)
	var lists [][]string
	for p := range procs {
		args := []string{"soak", "-child", "-url", s.BaseURL, "-metrics-url", metricsURL, "-room", s.Room, "-n", strconv.Itoa(min(per, s.N-p*per)),
			"-ramp", strconv.FormatFloat(s.Ramp/float64(procs), 'f', -1, 64), "-hold", s.Hold.String(), "-settle", s.Settle.String(),
			"-source-ips", strconv.Itoa(ips), "-first-ip", strconv.Itoa(p * ips), "-client", client,
			"-progress", s.ProgressEvery.String()}
		if s.Poll {
			args = append(args, "-poll")
		}
		if s.Widget {
			args = append(args, "-widget")
		}
		lists = append(lists, args)
	}
	type scrape struct {
		m     map[string]float64
		calls int64
		at    time.Time
	}
	read := func() (scrape, error) {
		m, err := k6.ScrapeSoak(ctx, metricsURL)
		sc := scrape{m: m, at: time.Now()}
		if err == nil && s.RedisCalls != nil {
			sc.calls, err = s.RedisCalls(ctx)
		}
		return sc, err
	}
	var mid, after scrape
	var midErr, afterErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		ramp := time.Duration(float64(s.N) / s.Ramp * float64(time.Second))
		time.Sleep(ramp + s.Settle + time.Second)
		mid, midErr = read()
		time.Sleep(s.Hold - 2*time.Second)
		after, afterErr = read()
	}()
	fmt.Fprintf(stdout, "spreading %d visitors over %d processes\n", s.N, procs)
	children, err := k6.RunChildren[k6.Report](ctx, lists, stderr)
	<-done
	if err = errors.Join(err, midErr, afterErr); err != nil {
		return k6.Report{}, err
	}
	secs := after.at.Sub(mid.at).Seconds()
	var server k6.Report
	server.ServerFigures(before, mid.m, after.m, secs)
	if s.RedisCalls != nil {
		server.RedisSidePerSec = float64(after.calls-mid.calls) / secs
	}
	return k6.MergeReports(server, children), nil
}

// totalCalls sums the calls of every command in INFO commandstats.
func totalCalls(ctx context.Context, rdb *redis.Client) (int64, error) {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, fmt.Errorf("soak: INFO commandstats: %w", err)
	}
	var total int64
	for _, line := range strings.Split(info, "\n") {
		_, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		n, err := strconv.ParseInt(calls, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("soak: INFO commandstats line %q: %w", line, err)
		}
		total += n
	}
	return total, nil
}
