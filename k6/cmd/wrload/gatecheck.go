package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"waitingroom/k6"
)

// gatecheckCommand measures the gate check's cost per request beside the
// same shop unguarded, in one run: waitingroom's GET /gate/check directly,
// and nginx (docs/nginx-gate.conf) with and without auth_request. With
// -direct it measures the check alone beside a hello-world server, in
// alternating rounds, without nginx.
func gatecheckCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gatecheck", flag.ContinueOnError)
	var g k6.GateCheck
	fs.StringVar(&g.RoomURL, "url", "", "a running waitingroom (loopback only)")
	fs.StringVar(&g.AdminToken, "admin-token", "", "its ADMIN_TOKEN")
	fs.StringVar(&g.Room, "room", "gatecheck", "the room to make (or update) into a gate-mode room")
	fs.StringVar(&g.Conf, "conf", "docs/nginx-gate.conf", "the nginx config template")
	fs.IntVar(&g.Concurrency, "c", 16, "concurrent workers")
	fs.DurationVar(&g.Duration, "d", 10*time.Second, "duration of each measurement (at most 2m)")
	fs.StringVar(&g.ShopAddr, "shop", "", "loopback address of the stand-in shop (default: any free port)")
	fs.StringVar(&g.ProxyURL, "proxy", "", "waitingroom's reverse-proxy listener (PROXY_ADDR, with ORIGIN_URL=http://<-shop>) to measure too")
	direct := fs.Bool("direct", false, "measure GET /gate/check alone beside a hello-world server (-hello), in alternating rounds; no nginx")
	hello := fs.String("hello", "", "with -direct: a hello-world server (wrload loadtest -serve-hello); default: one in this process")
	rounds := fs.Int("rounds", 3, "with -direct: rounds of a hello-world leg, then a check leg (1 to 20)")
	_, maxUnexpected := checkFlags(fs, "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	g.MaxUnexpected = *maxUnexpected
	if *direct {
		d := k6.GateCheckDirect{RoomURL: g.RoomURL, AdminToken: g.AdminToken, Room: g.Room, HelloURL: *hello,
			Concurrency: g.Concurrency, Duration: g.Duration, Rounds: *rounds, MaxUnexpected: g.MaxUnexpected}
		legs, err := d.Run(ctx, stderr)
		printGateCheckDirect(stdout, legs, g.Concurrency)
		return err
	}
	lines, err := g.Run(ctx, stderr)
	for _, l := range lines {
		fmt.Fprintf(stdout, "%-40s %7d requests %7.0f req/s  p50 %8v  p99 %8v\n", l.Name, l.Result.Requests, l.Result.RPS(),
			l.Result.Percentile(50).Round(time.Microsecond), l.Result.Percentile(99).Round(time.Microsecond))
	}
	if err != nil {
		return err
	}
	if len(lines) >= 3 {
		open, guarded := lines[1].Result, lines[2].Result
		fmt.Fprintf(stdout, "auth_request adds p50 %v, p99 %v (nginx GET /checkout minus GET /, %d workers, loopback)\n",
			(guarded.Percentile(50) - open.Percentile(50)).Round(time.Microsecond),
			(guarded.Percentile(99) - open.Percentile(99)).Round(time.Microsecond), g.Concurrency)
	}
	return nil
}

// printGateCheckDirect writes -direct's legs, round by round, then pooled,
// and the check's p99 over hello-world's.
func printGateCheckDirect(w io.Writer, legs []k6.GateCheckLeg, workers int) {
	p99 := map[string]time.Duration{}
	for _, l := range legs {
		round := "all rounds"
		if l.Round > 0 {
			round = fmt.Sprintf("round %d", l.Round)
		}
		perReq := time.Duration(0)
		if l.Result.Requests > 0 {
			perReq = l.ClientCPU / time.Duration(l.Result.Requests)
		}
		fmt.Fprintf(w, "%-10s %-16s %7d requests %7.0f req/s  p50 %8v  p99 %8v  client CPU %5v/req  machine busy %3.0f%%\n",
			round, l.Name, l.Result.Requests, l.Result.RPS(), l.Result.Percentile(50).Round(time.Microsecond),
			l.Result.Percentile(99).Round(time.Microsecond), perReq.Round(100*time.Nanosecond), 100*l.Busy)
		if l.Round == 0 {
			p99[l.Name] = l.Result.Percentile(99)
		}
	}
	if h, c := p99[k6.LegHello], p99[k6.LegCheck]; h > 0 && c > 0 {
		fmt.Fprintf(w, "check p99 / hello-world p99 = %.2f (%v / %v, %d workers, all rounds)\n",
			float64(c)/float64(h), c.Round(time.Microsecond), h.Round(time.Microsecond), workers)
	}
}
