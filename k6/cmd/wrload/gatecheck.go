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
// and nginx (docs/nginx-gate.conf) with and without auth_request.
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
	_, maxUnexpected := checkFlags(fs, "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	g.MaxUnexpected = *maxUnexpected
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
