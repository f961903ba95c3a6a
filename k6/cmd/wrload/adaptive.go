package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"waitingroom/k6"
)

// adaptiveRun is what `wrload adaptive -json` writes.
type adaptiveRun struct {
	Mode    string              `json:"mode"`
	Figures *k6.AdaptiveFigures `json:"figures,omitempty"`
	Steps   []k6.Step           `json:"steps,omitempty"`
	Runs    []k6.AdaptiveReport `json:"runs"`
	Date    string              `json:"date"`
	Compare *adaptiveComparison `json:"compare,omitempty"`
}

// adaptiveComparison is the compare run's verdict.
type adaptiveComparison struct {
	FixedRate float64 `json:"fixedRate"`
	Faster    bool    `json:"faster"`
	NoMore    bool    `json:"noMoreFailures"`
}

// adaptiveCommand measures adaptive admission against the real server in
// gate reverse-proxy mode, a knee shop as its origin.
func adaptiveCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("adaptive", flag.ContinueOnError)
	var a k6.Adaptive
	mode := fs.String("mode", "react", "react: one adaptive room and a long line through the schedule (converge, react, recover); "+
		"compare: a burst of -n buyers per room, adaptive (-url) beside calibrate's fixed rate (-url2), side by side; crowd: one room's burst, its report as JSON (compare's children)")
	fs.StringVar(&a.RoomURL, "url", "", "a running waitingroom in reverse-proxy mode (loopback only)")
	fs.StringVar(&a.ProxyURL, "proxy", "", "its reverse-proxy listener (PROXY_ADDR), whose ORIGIN_URL is http://<-shop>")
	fs.StringVar(&a.MetricsURL, "metrics-url", "", "its /metrics on METRICS_ADDR, where the room's rate, decisions and admissions are read each second")
	fs.StringVar(&a.ShopAddr, "shop", "", "loopback address the knee shop listens on (the server's ORIGIN_URL)")
	url2 := fs.String("url2", "", "compare: the fixed room's server (another process, so that each holds its own crowd's streams)")
	proxy2 := fs.String("proxy2", "", "compare: its reverse-proxy listener")
	metrics2 := fs.String("metrics-url2", "", "compare: its /metrics")
	shop2 := fs.String("shop2", "", "compare: its knee shop's address (its ORIGIN_URL)")
	fs.StringVar(&a.AdminToken, "admin-token", "", "the servers' ADMIN_TOKEN")
	fs.StringVar(&a.Room, "room", "adaptive", "the room to make (compare: <room>-adaptive and <room>-fixed); deleted after the run")
	schedule := fs.String("schedule", "100/60s,50/40s,100/80s", "the knee shop's capacity over time: capacity/duration,...")
	fs.DurationVar(&a.Work, "work", time.Second, "how long an order holds one of the shop's workers (capacity × work workers)")
	fs.DurationVar(&a.MaxWait, "max-wait", 5*time.Second, "an order that waits longer for a worker is answered 503 (0: no bound)")
	fs.Float64Var(&a.MinRate, "min-rate", 10, "the adaptive room's minRate (where react starts)")
	fs.Float64Var(&a.StartRate, "start-rate", 0, "the adaptive room's starting rate (0: minRate; compare: calibrate's fixed rate, where an operator who calibrated starts)")
	fs.Float64Var(&a.MaxRate, "max-rate", 200, "the adaptive room's maxRate")
	fs.DurationVar(&a.TargetP95, "target", 1500*time.Millisecond, "the adaptive room's targetP95Ms")
	fixed := fs.Float64("rate", 0, "crowd: a fixed room at this rate instead of an adaptive one")
	fs.IntVar(&a.Line, "line", 400, "react: buyers kept waiting until the schedule ends")
	fs.IntVar(&a.N, "n", 10000, "compare and crowd: buyers per room")
	fs.DurationVar(&a.Within, "within", 10*time.Second, "compare and crowd: the buyers enter within this long")
	fs.DurationVar(&a.Timeout, "timeout", 20*time.Minute, "bound on each room's run")
	fs.IntVar(&a.SourceIPs, "source-ips", 16, "spread connections over this many 127.0.0.x addresses")
	fs.IntVar(&a.FirstIP, "first-ip", 0, "offset of the first source address")
	margin := fs.Float64("margin", 0.2, "compare: calibrate's margin under the last rate that held")
	stepFor := fs.Duration("step", 8*time.Second, "compare: each calibration step's measure (after a quarter as long of warm-up)")
	jsonOut := fs.String("json", "", "write the run (reports, per-second series, figures) as JSON to this file")
	plotOut := fs.String("plot", "", "draw rate, served/s, capacity and p95 over time into this PNG")
	progress := progressFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkProgress("adaptive", *progress); err != nil {
		return err
	}
	sc, err := k6.ParseSchedule(*schedule)
	if err != nil {
		return fmt.Errorf("adaptive: %w", err)
	}
	a.Schedule, a.Progress, a.ProgressEvery = sc, stderr, *progress
	a.Adaptive = true
	out := adaptiveRun{Mode: *mode, Date: time.Now().UTC().Format(time.RFC3339)}
	switch *mode {
	case "react":
		a.N = 0
		rep, err := a.Run(ctx)
		if err != nil {
			return err
		}
		f, err := rep.Figures()
		if err != nil {
			return err
		}
		out.Figures, out.Runs = &f, []k6.AdaptiveReport{rep}
		fmt.Fprintf(stdout, "adaptive admission, schedule %s, target p95 %v, rate %g..%g, a line of %d kept waiting:\n%s",
			sc, a.TargetP95, a.MinRate, a.MaxRate, a.Line, f)
		fmt.Fprint(stdout, seriesTable(rep))
		if misses := f.Misses(); len(misses) > 0 {
			fmt.Fprintf(stdout, "MISSED:\n  %s\n", strings.Join(misses, "\n  "))
		}
	case "crowd":
		a.Line = 0
		if *fixed > 0 {
			a.Adaptive, a.Rate = false, *fixed
		}
		rep, err := a.Run(ctx)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(rep)
	case "compare":
		cmp, err := compare(ctx, a, [3]string{*url2, *proxy2, *metrics2}, *shop2, *margin, *stepFor, &out, stdout, stderr)
		if err != nil {
			return err
		}
		out.Compare = cmp
	default:
		return fmt.Errorf("adaptive: -mode %q is not react, compare or crowd", *mode)
	}
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(out, "", " ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			return fmt.Errorf("adaptive: %w", err)
		}
	}
	if *plotOut != "" {
		names := []string{"adaptive"}
		title := "Adaptive admission: the room's rate against the shop's capacity"
		if out.Compare != nil {
			names = append(names, fmt.Sprintf("fixed %g/s", out.Compare.FixedRate))
			title = "Adaptive beside calibrate's fixed rate"
		}
		if err := k6.PlotAdaptive(*plotOut, title, out.Runs, names); err != nil {
			return err
		}
	}
	return nil
}

// compare finds calibrate's fixed rate on the knee shop at its first
// capacity, then runs the two rooms side by side, each crowd in a child
// process (a process holds at most ~19,000 streams), and prints them.
func compare(ctx context.Context, a k6.Adaptive, server2 [3]string, shop2 string, margin float64, stepFor time.Duration,
	out *adaptiveRun, stdout, stderr io.Writer) (*adaptiveComparison, error) {
	if server2[0] == "" || server2[1] == "" || server2[2] == "" || shop2 == "" {
		return nil, errors.New("adaptive: compare needs -url2, -proxy2, -metrics-url2 and -shop2 (the fixed room's server and shop)")
	}
	if margin < 0 || margin >= 1 {
		return nil, errors.New("adaptive: -margin must be in [0, 1)")
	}
	fixed := a
	fixed.RoomURL, fixed.ProxyURL, fixed.MetricsURL, fixed.ShopAddr, fixed.Adaptive, fixed.Rate = server2[0], server2[1], server2[2], shop2, false, 1
	a.Room, fixed.Room = a.Room+"-adaptive", a.Room+"-fixed"
	fixed.FirstIP = a.FirstIP + a.SourceIPs
	for _, r := range []k6.Adaptive{a, fixed} {
		r.Line = 0
		if err := r.Validate(); err != nil {
			return nil, err
		}
	}
	c0 := a.Schedule[0].Capacity
	fmt.Fprintf(stderr, "adaptive: calibrating the knee shop at %g/s\n", c0)
	steps, err := k6.KneeSteps{Capacity: c0, Work: a.Work, MaxWait: a.MaxWait, Rates: k6.RatesAround(c0, 0.4, 1.6, 0.2),
		Warmup: stepFor / 4, Duration: stepFor}.Run(ctx)
	if err != nil {
		return nil, err
	}
	rate, lastGood, _ := k6.Recommend(steps, margin)
	if rate <= 0 {
		return nil, fmt.Errorf("adaptive: calibrate recommends no rate:\n%s", k6.FormatSteps(steps))
	}
	fixed.Rate = rate
	if a.StartRate == 0 {
		a.StartRate = min(max(rate, a.MinRate), a.MaxRate)
	}
	out.Steps = steps
	fmt.Fprintf(stdout, "calibrate on the knee shop at %g/s (GET /checkout, %v per step):\n%srecommended fixed rate: %g/s (%g less %.0f%%)\n\n",
		c0, stepFor, k6.FormatSteps(steps), rate, lastGood, 100*margin)
	var argLists [][]string
	for _, r := range []k6.Adaptive{a, fixed} {
		argLists = append(argLists, crowdArgs(r))
	}
	reps, err := k6.RunChildren[k6.AdaptiveReport](ctx, argLists, stderr)
	if err != nil {
		return nil, err
	}
	out.Runs = reps
	ad, fx := reps[0], reps[1]
	cmp := &adaptiveComparison{FixedRate: rate, Faster: ad.Elapsed < fx.Elapsed, NoMore: ad.ShopFailed <= fx.ShopFailed}
	fmt.Fprintf(stdout, "%d buyers per room entering within %v, shop capacity %s, side by side:\n\n", a.N, a.Within, a.Schedule)
	fmt.Fprintf(stdout, "| | adaptive (%g..%g/s from %g/s, target p95 %v) | fixed %g/s (calibrate's pick) |\n|---|---|---|\n", a.MinRate, a.MaxRate,
		a.StartRate, a.TargetP95, rate)
	row := func(name string, f func(k6.AdaptiveReport) string) {
		fmt.Fprintf(stdout, "| %s | %s | %s |\n", name, f(ad), f(fx))
	}
	row("buyers served / entered", func(r k6.AdaptiveReport) string { return fmt.Sprintf("%d / %d", r.Served, r.Buyers) })
	row("time to serve everyone", func(r k6.AdaptiveReport) string { return r.Elapsed.Round(100 * time.Millisecond).String() })
	row("shop p95, every order", func(r k6.AdaptiveReport) string { return r.OrderP95.Round(time.Millisecond).String() })
	row("failures at the shop (5xx after the retries)", func(r k6.AdaptiveReport) string { return strconv.Itoa(r.ShopFailed) })
	row("failures in the room (enter, stream or pass)", func(r k6.AdaptiveReport) string { return strconv.Itoa(r.Failed - r.ShopFailed) })
	row("shop 503s (waited past the bound)", func(r k6.AdaptiveReport) string { return strconv.Itoa(rejected(r)) })
	row("seconds with shop p95 over the target", func(r k6.AdaptiveReport) string { return strconv.Itoa(overTarget(r, a.TargetP95)) })
	for i, r := range reps {
		if len(r.Errors) > 0 {
			fmt.Fprintf(stdout, "%s failures: %s\n", []string{"adaptive", "fixed"}[i], k6.FormatCounts(r.Errors))
		}
	}
	switch {
	case cmp.Faster && cmp.NoMore:
		fmt.Fprintln(stdout, "adaptive: faster, with no more failures")
	default:
		fmt.Fprintf(stdout, "MISSED: adaptive is not faster with no more failures at the shop (%v vs %v, %d vs %d)\n",
			ad.Elapsed.Round(100*time.Millisecond), fx.Elapsed.Round(100*time.Millisecond), ad.ShopFailed, fx.ShopFailed)
	}
	return cmp, nil
}

// crowdArgs is the command line of a child running r's crowd.
func crowdArgs(r k6.Adaptive) []string {
	args := []string{"adaptive", "-mode", "crowd", "-url", r.RoomURL, "-proxy", r.ProxyURL, "-metrics-url", r.MetricsURL, "-shop", r.ShopAddr,
		"-admin-token", r.AdminToken, "-room", r.Room, "-schedule", r.Schedule.String(), "-work", r.Work.String(),
		"-max-wait", r.MaxWait.String(), "-min-rate", fmt.Sprint(r.MinRate), "-max-rate", fmt.Sprint(r.MaxRate),
		"-target", r.TargetP95.String(), "-n", strconv.Itoa(r.N), "-within", r.Within.String(), "-timeout", r.Timeout.String(),
		"-source-ips", strconv.Itoa(r.SourceIPs), "-first-ip", strconv.Itoa(r.FirstIP), "-progress", r.ProgressEvery.String()}
	if !r.Adaptive {
		args = append(args, "-rate", fmt.Sprint(r.Rate))
	}
	if r.Adaptive && r.StartRate > 0 {
		args = append(args, "-start-rate", fmt.Sprint(r.StartRate))
	}
	return args
}

func rejected(r k6.AdaptiveReport) int {
	n := 0
	for _, s := range r.Seconds {
		n += s.Rejected
	}
	return n
}

func overTarget(r k6.AdaptiveReport, target time.Duration) int {
	n := 0
	for _, s := range r.Seconds {
		if s.Served > 0 && s.P95 > target {
			n++
		}
	}
	return n
}

// seriesTable prints the per-second series, one line every second.
func seriesTable(r k6.AdaptiveReport) string {
	var b strings.Builder
	b.WriteString("\n   t   rate  admitted  served  p95      503s  capacity  waiting  reason\n")
	for _, s := range r.Seconds {
		fmt.Fprintf(&b, "%4d  %5.1f  %8d  %6d  %-7v  %4d  %8.0f  %7d  %s\n", s.T, s.Rate, s.Admitted, s.Served,
			s.P95.Round(time.Millisecond), s.Rejected, s.Capacity, s.Waiting, s.Reason)
	}
	return b.String()
}
