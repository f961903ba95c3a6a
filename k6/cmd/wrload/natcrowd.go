package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"waitingroom/k6"
)

// defaultPhoneHPS is the assumed mid-range phone's SHA-256 hashes per
// second with the page's ALTCHA worker, one worker: a quarter of headless
// Chromium's 80,000 on one core of the benchmark machine (BENCHMARKS.md).
const defaultPhoneHPS = 20_000

// phoneFlag defines -phone-hps.
func phoneFlag(fs *flag.FlagSet) *float64 {
	return fs.Float64("phone-hps", defaultPhoneHPS, "the assumed phone's SHA-256 hashes per second: a solution's hashes / this = its phone-equivalent time")
}

// natcrowdCommand runs a legitimate crowd behind one address (carrier-grade
// NAT) into a challenge room and reports who joined and what the challenge
// cost them.
func natcrowdCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("natcrowd", flag.ContinueOnError)
	var c k6.NATCrowd
	fs.StringVar(&c.URL, "url", "", "a running waitingroom (loopback only)")
	adminToken := fs.String("admin-token", "", "its ADMIN_TOKEN: the room is made afresh with -challenge")
	fs.StringVar(&c.Room, "room", "natcrowd", "the room to make (an earlier one of this name is deleted)")
	challenge := fs.String("challenge", "auto", "the room's challenge setting: off, auto or always")
	fs.IntVar(&c.N, "n", 5000, "buyers, all from 127.0.0.1 without X-Forwarded-For")
	fs.DurationVar(&c.Window, "window", 10*time.Second, "the buyers arrive evenly within this long")
	fs.DurationVar(&c.Timeout, "timeout", 5*time.Minute, "bound of the whole run")
	fs.IntVar(&c.Solvers, "solvers", 0, "searches under way at once (0: GOMAXPROCS)")
	phone := phoneFlag(fs)
	progress := progressFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkProgress("natcrowd", *progress); err != nil {
		return err
	}
	if *adminToken == "" {
		return errors.New("natcrowd: -admin-token is required")
	}
	c.PhoneHPS, c.Progress, c.ProgressEvery = *phone, stderr, *progress
	if err := c.Validate(); err != nil {
		return err
	}
	if err := remakeRoom(ctx, c.URL, c.Room, *adminToken, map[string]any{"title": "NAT crowd", "challenge": *challenge}); err != nil {
		return fmt.Errorf("natcrowd: %w", err)
	}
	rep, err := c.Run(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "(room challenge %s)\n%s", *challenge, rep)
	return rep.Check()
}

// remakeRoom deletes room (when it exists) and makes it with settings.
func remakeRoom(ctx context.Context, base, room, token string, settings map[string]any) error {
	_ = k6.DeleteRoom(ctx, base, room, token) // none to delete is fine
	return k6.PutRoom(ctx, base, room, token, settings)
}
