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
func soakCommand(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stdout)
	var s k6.Soak
	fs.StringVar(&s.BaseURL, "url", "http://127.0.0.1:8080", "server base URL (loopback only)")
	fs.StringVar(&s.Room, "room", "demo", "room to wait in")
	fs.IntVar(&s.N, "n", 100, "visitors (at most 19000 per process)")
	fs.Float64Var(&s.Ramp, "ramp", 1000, "new visitors per second")
	fs.DurationVar(&s.Hold, "hold", 20*time.Second, "how long to hold them once connected")
	fs.DurationVar(&s.Settle, "settle", 3*time.Second, "pause between the ramp and the measurement")
	fs.IntVar(&s.SourceIPs, "source-ips", 16, "spread connections over 127.0.0.1..127.0.0.N")
	fs.BoolVar(&s.Poll, "poll", false, "poll the position API like the seed's clients instead of SSE")
	client := fs.String("client", "raw", "SSE client: raw (lean, one goroutine per stream) or r3labs")
	redisURL := fs.String("redis-url", "", "also report Redis-side INFO commandstats deltas of this Redis")
	if err := fs.Parse(args); err != nil {
		return err
	}
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
	rep, err := s.Run(ctx)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, rep.String())
	if rep.Connected == 0 {
		return errors.New("soak: no visitor connected")
	}
	return nil
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
