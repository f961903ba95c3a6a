package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"waitingroom/k6"
)

// challengesFlag defines -challenges, the room settings a tool compares.
func challengesFlag(fs *flag.FlagSet) *string {
	return fs.String("challenges", "off,auto", "the rooms' challenge settings to compare, in order, comma-separated")
}

// powbotCommand runs a bot with all of this machine's CPU against a room
// per challenge setting, one after the other, and compares the identities
// it placed per CPU-second.
func powbotCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("powbot", flag.ContinueOnError)
	var b k6.PowBot
	fs.StringVar(&b.URL, "url", "", "a running waitingroom (loopback only; for -source v6-64 it trusts loopback as a proxy, TRUSTED_PROXIES)")
	adminToken := fs.String("admin-token", "", "its ADMIN_TOKEN: the rooms are made afresh")
	room := fs.String("room", "powbot", "the rooms' name prefix: <room>-<challenge>")
	challenges := challengesFlag(fs)
	fs.IntVar(&b.Workers, "workers", 4*runtime.GOMAXPROCS(0), "identities under way at once")
	fs.DurationVar(&b.Duration, "duration", time.Minute, "how long the bot runs against each room (at most 10m)")
	fs.StringVar(&b.Source, "source", k6.SourceOne, "where identities come from: one (127.0.0.1) or v6-64 (random addresses of one IPv6 /64 in X-Forwarded-For)")
	keep := fs.Bool("keep", false, "keep the rooms (default: delete them and their lines at the end)")
	progress := progressFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkProgress("powbot", *progress); err != nil {
		return err
	}
	if *adminToken == "" {
		return errors.New("powbot: -admin-token is required")
	}
	b.Progress, b.ProgressEvery = stderr, *progress
	var reps []k6.PowBotReport
	for _, c := range strings.Split(*challenges, ",") {
		rb := b
		rb.Room = *room + "-" + c
		if err := rb.Validate(); err != nil {
			return err
		}
		if err := remakeRoom(ctx, rb.URL, rb.Room, *adminToken, map[string]any{"title": "Bot " + c, "challenge": c}); err != nil {
			return fmt.Errorf("powbot: %w", err)
		}
		rep, err := rb.Run(ctx)
		if !*keep {
			_ = k6.DeleteRoom(context.WithoutCancel(ctx), rb.URL, rb.Room, *adminToken)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "(room challenge %s, %d workers, GOMAXPROCS %d)\n%s", c, rb.Workers, runtime.GOMAXPROCS(0), rep)
		reps = append(reps, rep)
	}
	for _, r := range reps[1:] {
		fmt.Fprintf(stdout, "powbot (source %s): %s places %s identities per CPU-second of %s's\n",
			b.Source, r.Room, ratio(reps[0].PerCPUSecond(), r.PerCPUSecond()), reps[0].Room)
	}
	return nil
}

// ratio says how many times fewer b is than a: "1/123×".
func ratio(a, b float64) string {
	switch {
	case a == 0:
		return "(none to compare: the first placed nothing)"
	case b == 0:
		return "none of the"
	}
	return fmt.Sprintf("1/%.0f×", a/b)
}
