package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"waitingroom/k6"
)

// etaCommand measures the estimated wait the page shows against the real
// wait, in three bounded scenarios on fresh rooms: steady state without
// maxActive, steady state with maxActive 20 and unused 20 s passes, and
// the 10 s after a rate change from 10 to 25 per second.
func etaCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eta", flag.ContinueOnError)
	r := k6.ETARun{}
	fs.StringVar(&r.URL, "url", "http://127.0.0.1:8080", "server base URL (loopback only)")
	fs.StringVar(&r.AdminToken, "admin-token", "", "admin token, to create the scenarios' rooms")
	prefix := fs.String("room-prefix", "eta", "the scenarios' rooms are <prefix>-<scenario>-<unix time>")
	fs.IntVar(&r.SourceIPs, "source-ips", 16, "spread connections over this many 127.0.0.x addresses")
	fs.DurationVar(&r.Timeout, "timeout", 5*time.Minute, "bound on each scenario, its drain included")
	scale := fs.Float64("scale", 1, "multiply every scenario's phase lengths by this (0.2 to 4), for a quicker or a steadier run")
	progress := progressFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkProgress("eta", *progress); err != nil {
		return err
	}
	if *scale < 0.2 || *scale > 4 {
		return fmt.Errorf("eta: -scale %v out of [0.2, 4]", *scale)
	}
	r.Progress = stderr
	d := func(s float64) time.Duration { return time.Duration(s * *scale * float64(time.Second)) }
	stamp := time.Now().Unix()
	type window struct {
		name             string
		from, to, doneBy func(k6.ETAResult) time.Duration
	}
	at := func(phase int, off time.Duration) func(k6.ETAResult) time.Duration {
		return func(res k6.ETAResult) time.Duration { return res.PhaseStarts[phase] + off }
	}
	never := func(k6.ETAResult) time.Duration { return 0 }
	scenarios := []struct {
		sc      k6.ETAScenario
		windows []window
	}{
		{k6.ETAScenario{Name: "steady", Phases: []k6.ETAPhase{
			{Settings: map[string]any{"rate": 5, "maxActive": 0, "tokenTTLSeconds": 300, "paused": false}, Backlog: 75, Arrivals: 5, For: d(45)},
		}}, []window{{"steady state, no maxActive (rate 5/s, about 15 s waits)", at(0, d(15)), at(0, d(45)), never}}},
		{k6.ETAScenario{Name: "maxactive", Phases: []k6.ETAPhase{
			{Settings: map[string]any{"rate": 10, "maxActive": 20, "tokenTTLSeconds": 20, "paused": false}, Backlog: 40, Arrivals: 1, For: d(90)},
		}}, []window{{"steady state, maxActive 20, unused 20 s passes (rate 10/s)", at(0, d(30)), at(0, d(90)), never}}},
		{k6.ETAScenario{Name: "ratechange", Phases: []k6.ETAPhase{
			{Settings: map[string]any{"rate": 10, "maxActive": 0, "tokenTTLSeconds": 300, "paused": false}, Backlog: 200, Arrivals: 10, For: d(25)},
			{Settings: map[string]any{"rate": 25}, Arrivals: 25, For: d(15)},
		}}, []window{
			{"before the change (rate 10/s), buyers let in before it", at(0, d(10)), at(1, 0), at(1, 0)},
			{"within 10 s after 10/s -> 25/s", at(1, 0), at(1, 10*time.Second), never},
		}},
	}
	for _, s := range scenarios {
		r.Room = fmt.Sprintf("%s-%s-%d", *prefix, s.sc.Name, stamp)
		res, err := r.Run(ctx, s.sc)
		if err != nil {
			return fmt.Errorf("eta: %s: %w", s.sc.Name, err)
		}
		fmt.Fprintf(stdout, "%s (room %s): %d buyers, %d never let in\n", s.sc.Name, r.Room, res.Buyers, res.NeverIn)
		for _, w := range s.windows {
			from, to, by := w.from(res), w.to(res), w.doneBy(res)
			fmt.Fprintf(stdout, "  %s\n    every ETA shown: %v\n    ETA at the enter: %v\n", w.name, res.Error(from, to, by, false), res.Error(from, to, by, true))
		}
	}
	return nil
}
