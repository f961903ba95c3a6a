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
	fs.StringVar(&s.BaseURL, "url", "http://127.0.0.1:8080", "server base URL (loopback only), or a comma-separated list of servers: visitor i connects to server i mod their number")
	fs.StringVar(&s.MetricsURL, "metrics-url", "", "the server's private metrics URL (its METRICS_ADDR; default "+k6.DefaultMetricsURL+"), or a list of one per -url, in the same order")
	fs.StringVar(&s.Room, "room", "demo", "room to wait in")
	fs.IntVar(&s.N, "n", 100, "visitors (at most 19000 per process)")
	fs.Float64Var(&s.Ramp, "ramp", 1000, "new visitors per second")
	fs.DurationVar(&s.Hold, "hold", 20*time.Second, "how long to hold them once connected")
	fs.DurationVar(&s.Settle, "settle", 3*time.Second, "pause between the ramp and the measurement")
	fs.DurationVar(&s.Linger, "linger", 0, "keep the connections open, unmeasured, this long after the hold (children: while the parent reads the servers' memory)")
	fs.IntVar(&s.SourceIPs, "source-ips", 16, "spread connections over 127.0.0.1..127.0.0.N")
	fs.BoolVar(&s.Poll, "poll", false, "poll the position API like the seed's clients instead of SSE")
	fs.StringVar(&s.GCURL, "gc-url", "", "fetched before the memory figures are read: the server's DEBUG_ADDR /debug/pprof/heap?gc=1 collects its garbage first (a list of one per -url with several servers)")
	fs.DurationVar(&s.Tick, "tick", time.Second, "the servers' tick period: for a server that does not count its ticks (sse-reference), the hold's ticks, for the writes per tick, are its seconds over this")
	classes := fs.Bool("classes", true, "sort the timed events into priority classes (ready, front, back); false for a server whose events carry none, such as sse-reference")
	fs.BoolVar(&s.Widget, "widget", false, "hold embedded-widget viewers (/r/{room}/widget/events: no ticket) instead of waiting visitors")
	client := fs.String("client", "raw", "SSE client: raw (lean, one goroutine per stream) or r3labs")
	redisURL := fs.String("redis-url", "", "also report Redis-side INFO commandstats deltas of this Redis")
	procs := fs.Int("procs", 1, "child processes to spread the visitors over (one process holds at most 19,000)")
	child := fs.Bool("child", false, "run as a child process: print the raw report as JSON")
	fs.IntVar(&s.FirstIP, "first-ip", 0, "offset of the first source address")
	fs.IntVar(&s.FirstVisitor, "first-visitor", 0, "index of the first visitor among all processes' (children): it picks the server")
	progress := progressFlag(fs)
	_, maxUnexpected := checkFlags(fs, "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkProgress("soak", *progress); err != nil {
		return err
	}
	s.Progress, s.ProgressEvery = stderr, *progress
	s.Unclassed = !*classes
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
// measures the server side (RSS, commands, writes, CPU) over the
// children's hold; the children's client-side figures are merged exactly.
// Each child gets every server and its own range of visitors and source
// addresses.
func soakChildren(ctx context.Context, s k6.Soak, procs int, client string, stdout, stderr io.Writer) (k6.Report, error) {
	per := (s.N + procs - 1) / procs
	ips := max(1, s.SourceIPs/procs)
	one := s // what each child will check for itself, checked here first
	one.N, one.SourceIPs, one.FirstIP = per, ips, s.FirstIP+(procs-1)*ips
	if err := one.Validate(); err != nil {
		return k6.Report{}, fmt.Errorf("%w (with -procs %d, each child holds %d visitors on %d source addresses)", err, procs, per, ips)
	}
	servers, err := s.Servers()
	if err != nil {
		return k6.Report{}, err
	}
	urls, metricsURLs := make([]string, len(servers)), make([]string, len(servers))
	for i, srv := range servers {
		urls[i], metricsURLs[i] = srv.URL, srv.MetricsURL
	}
	if err := k6.SettleMemory(ctx, servers); err != nil {
		return k6.Report{}, err
	}
	before, err := k6.ScrapeSoakAll(ctx, servers)
	if err != nil {
		return k6.Report{}, err
	}
	// The parent reads the servers' counters a second before the children's
	// hold ends, then collects their garbage until the RSS settles: the
	// children keep their connections that long.
	childLinger := max(s.Linger, 2*time.Second)
	if strings.TrimSpace(s.GCURL) != "" {
		childLinger = max(s.Linger, k6.SettleTime)
	}
	var lists [][]string
	for p := range procs {
		args := []string{"soak", "-child", "-url", strings.Join(urls, ","), "-metrics-url", strings.Join(metricsURLs, ","), "-room", s.Room,
			"-n", strconv.Itoa(min(per, s.N-p*per)), "-first-visitor", strconv.Itoa(s.FirstVisitor + p*per),
			"-ramp", strconv.FormatFloat(s.Ramp/float64(procs), 'f', -1, 64), "-hold", s.Hold.String(), "-settle", s.Settle.String(),
			"-source-ips", strconv.Itoa(ips), "-first-ip", strconv.Itoa(s.FirstIP + p*ips), "-client", client,
			"-progress", s.ProgressEvery.String(), "-tick", s.Tick.String(), "-classes=" + strconv.FormatBool(!s.Unclassed),
			"-linger", childLinger.String()}
		if s.Poll {
			args = append(args, "-poll")
		}
		if s.Widget {
			args = append(args, "-widget")
		}
		lists = append(lists, args)
	}
	type scrape struct {
		m     []map[string]float64
		calls int64
		at    time.Time
	}
	read := func(scrapeAll func(context.Context, []k6.SoakServer) ([]map[string]float64, error)) (scrape, error) {
		at := time.Now() // the counters are read first, the memory after any collection
		m, err := scrapeAll(ctx, servers)
		sc := scrape{m: m, at: at}
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
		// The children start their hold a settle after their last visitor
		// connected: the parent waits for the servers to hold the streams
		// (99% of them: more failing fails the run), or for the ramp's
		// planned time where they do not say, then reads a second into the
		// hold and a second before its end.
		start := time.Now()
		ramp := time.Duration(float64(s.N) / s.Ramp * float64(time.Second))
		time.Sleep(ramp)
		if !s.Poll {
			if _, midErr = k6.WaitServerStreams(ctx, servers, before, 0.99*float64(s.N), start.Add(ramp+30*time.Second)); midErr != nil {
				return
			}
		}
		time.Sleep(s.Settle + time.Second)
		mid, midErr = read(k6.ScrapeSoakAll)
		time.Sleep(s.Hold - 2*time.Second)
		after, afterErr = read(k6.ScrapeSoakEnd)
	}()
	fmt.Fprintf(stdout, "spreading %d visitors over %d processes\n", s.N, procs)
	children, err := k6.RunChildren[k6.Report](ctx, lists, stderr)
	<-done
	if err = errors.Join(err, midErr, afterErr); err != nil {
		return k6.Report{}, err
	}
	secs := after.at.Sub(mid.at).Seconds()
	server := k6.Report{TickSeconds: s.Tick.Seconds()}
	if server.TickSeconds <= 0 {
		server.TickSeconds = 1
	}
	server.ServersFigures(servers, before, mid.m, after.m, secs)
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
	return k6.CommandCalls(info)
}
