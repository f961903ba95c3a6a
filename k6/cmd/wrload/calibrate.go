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

// calibrateCommand steps the order rate (the second seed's method),
// detects the knee, recommends an admission rate and, with -apply, sets
// it on the room.
func calibrateCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	c := k6.Calibrate{}
	fs.StringVar(&c.BaseURL, "url", "http://127.0.0.1:8080", "server base URL (loopback only)")
	fs.StringVar(&c.Room, "calib-room", "calibrate", "scratch room the steps run in (reset before each step)")
	room := fs.String("room", "demo", "room whose rate -apply sets")
	fs.Float64Var(&c.From, "from", 20, "first order rate, per second")
	fs.Float64Var(&c.To, "to", 80, "last order rate, per second")
	fs.Float64Var(&c.By, "by", 10, "step between rates")
	fs.DurationVar(&c.Duration, "duration", 30*time.Second, "measurement per step")
	fs.DurationVar(&c.Warmup, "warmup", 5*time.Second, "warm-up per step, excluded from the figures")
	fs.IntVar(&c.SourceIPs, "source-ips", 8, "spread connections over this many 127.0.0.x addresses")
	margin := fs.Float64("margin", 0.2, "safety margin under the last rate that held (the seed took 40 of 50)")
	apply := fs.Bool("apply", false, "set the recommended rate on -room through the admin API")
	admin := fs.String("admin-token", "", "admin token (required: the scratch room is set to passthrough)")
	dbURL := fs.String("database-url", "", "order database (required: orders and stock are reset between steps)")
	progress := progressFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkProgress("calibrate", *progress); err != nil {
		return err
	}
	c.Progress, c.ProgressEvery = stderr, *progress
	if *admin == "" || *dbURL == "" {
		return errors.New("calibrate: -admin-token and -database-url are required")
	}
	if *margin < 0 || *margin >= 1 {
		return errors.New("calibrate: -margin must be in [0, 1)")
	}
	c.Prepare = func(ctx context.Context, stock int64) error {
		if err := k6.PutRoom(ctx, c.BaseURL, c.Room, *admin, map[string]any{"title": "calibration", "mode": "passthrough", "soldOut": false}); err != nil {
			return err
		}
		return resetRoomStock(ctx, *dbURL, c.Room, stock)
	}
	c.StepDone = func(s k6.Step) {
		fmt.Fprintf(stdout, "step %.0f/s: actual %.1f/s, p95 %v, failures %.2f%% (%d orders)\n",
			s.Target, s.Actual, s.P95.Round(time.Millisecond), 100*s.FailRate, s.Orders)
	}
	steps, err := c.Run(ctx)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, "\n", k6.FormatSteps(steps))
	rate, lastGood, found := k6.Recommend(steps, *margin)
	switch {
	case rate == 0:
		return errors.New("calibrate: even the first step saturated the order path; start lower (-from)")
	case !found:
		fmt.Fprintf(stdout, "\nno knee up to %.0f/s: the order path took every step; %.0f/s is a lower bound.\n", lastGood, lastGood)
	default:
		fmt.Fprintf(stdout, "\nknee after %.0f/s.\n", lastGood)
	}
	fmt.Fprintf(stdout, "recommended rate: %.0f/s (%.0f/s less a %.0f%% margin)\n", rate, lastGood, 100**margin)
	if ar, ok := k6.RecommendAdaptive(steps, *margin); ok {
		fmt.Fprint(stdout, "\n", k6.FormatAdaptive(ar, *room))
	}
	if *apply {
		if err := k6.PutRoom(ctx, c.BaseURL, *room, *admin, map[string]any{"rate": rate}); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "applied: room %s admits %.0f/s\n", *room, rate)
	}
	return nil
}
