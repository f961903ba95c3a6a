package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq" // the order database of -database-url

	"waitingroom/k6"
)

// burstRun is what `wrload burst -json` writes: the summary, the
// timeline and the server-side figures, for BENCHMARKS.md and the plot.
type burstRun struct {
	Mode           string          `json:"mode"`
	Summary        k6.BurstSummary `json:"summary"`
	IdleOrderP95   time.Duration   `json:"idleOrderP95"`
	Timeline       []k6.Second     `json:"timeline"`
	DBInUseMax     float64         `json:"dbInUseMax"`
	RedisCmdPerSec float64         `json:"redisCommandsPerSecond"`
	AdmittedPerSec float64         `json:"admittedPerSecond"`
	StockBefore    int64           `json:"stockBefore"`
	StockAfter     int64           `json:"stockAfter"`
}

// burstCommand simulates a flash sale against running servers.
func burstCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("burst", flag.ContinueOnError)
	var b k6.Burst
	urls := fs.String("url", "http://127.0.0.1:8080", "server base URLs, comma-separated (loopback only)")
	metricsURLs := fs.String("metrics-url", "", "the servers' private metrics URLs (their METRICS_ADDR), comma-separated, one per -url (default, for one server: "+k6.DefaultMetricsURL+")")
	fs.StringVar(&b.Room, "room", "demo", "room of the sale")
	fs.IntVar(&b.N, "n", 100, "buyers")
	fs.DurationVar(&b.Within, "within", 10*time.Second, "the buyers enter within this long")
	fs.DurationVar(&b.Timeout, "timeout", 15*time.Minute, "bound on the whole run")
	fs.IntVar(&b.SourceIPs, "source-ips", 16, "spread connections over this many 127.0.0.x addresses")
	fs.IntVar(&b.FirstIP, "first-ip", 0, "offset of the first source address")
	procs := fs.Int("procs", 1, "child processes to spread the buyers over (one process holds at most 19,000)")
	child := fs.Bool("child", false, "run as a child process: print the raw report as JSON")
	passthrough := fs.Bool("passthrough", false, "run the same crowd with the room in passthrough mode (the no-room baseline)")
	admin := fs.String("admin-token", "", "admin token, to set the room's mode (and rate) and reopen it")
	rate := fs.Float64("rate", 0, "set the room's admission rate first (0: leave it)")
	dbURL := fs.String("database-url", "", "order database, to reset the room's orders and stock first")
	stock := fs.Int64("stock", 0, "stock of the room's product after the reset (0: the number of buyers)")
	idle := fs.Int("idle", 20, "orders placed one by one before the burst, to measure the idle p95")
	jsonOut := fs.String("json", "", "write the run (summary, timeline) as JSON to this file")
	progress := progressFlag(fs)
	expect, maxUnexpected := checkFlags(fs, "201")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	expected, err := k6.ParseStatuses(*expect)
	if err != nil {
		return fmt.Errorf("burst: -expect: %w", err)
	}
	if err := checkProgress("burst", *progress); err != nil {
		return err
	}
	b.Progress, b.ProgressEvery = stderr, *progress
	b.URLs = strings.Split(*urls, ",")
	metrics, err := metricsEndpoints(b.URLs, *metricsURLs)
	if err != nil {
		return err
	}
	if *child {
		rep, err := b.Run(ctx)
		if err != nil {
			return err
		}
		return k6.EncodeReport(stdout, rep)
	}
	if err := b.Validate(); err != nil && *procs <= 1 {
		return err
	}
	mode := "queue"
	if *passthrough {
		mode = "passthrough"
	}
	run := burstRun{Mode: mode}
	if *admin != "" {
		body := map[string]any{"mode": mode, "soldOut": false}
		if *rate > 0 {
			body["rate"] = *rate
		}
		if err := k6.PutRoom(ctx, b.URLs[0], b.Room, *admin, body); err != nil {
			return err
		}
	}
	if *dbURL != "" {
		want := *stock
		if want == 0 {
			want = int64(b.N + *idle)
		}
		if err := resetRoomStock(ctx, *dbURL, b.Room, want); err != nil {
			return err
		}
		run.StockBefore = want
	}
	if *idle > 0 {
		ib := b
		ib.N, ib.Within, ib.Progress = 1, time.Millisecond, nil
		var lat []time.Duration
		for range *idle {
			rep, err := ib.Run(ctx)
			if err != nil {
				return err
			}
			if s := rep.Samples[0]; s.Order > 0 {
				lat = append(lat, s.Order)
			}
		}
		run.IdleOrderP95 = k6.Summarise(k6.BurstReport{Samples: samplesOf(lat)}).OrderP95
		fmt.Fprintf(stdout, "idle: %d orders one by one, p95 %v\n", len(lat), run.IdleOrderP95.Round(time.Millisecond))
	}

	// Server-side figures, sampled every second.
	sampleCtx, stopSampling := context.WithCancel(ctx)
	var admitted, inUse, cmds []float64
	var sampled sync.WaitGroup
	start := time.Now()
	sampled.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			var a, d, c float64
			for _, u := range metrics {
				m, err := k6.Scrape(sampleCtx, u,
					"waitingroom_admitted_total", "waitingroom_db_connections_in_use", "waitingroom_redis_commands_total")
				if err == nil {
					a, d, c = a+m["waitingroom_admitted_total"], d+m["waitingroom_db_connections_in_use"], c+m["waitingroom_redis_commands_total"]
				}
			}
			admitted, inUse, cmds = append(admitted, a), append(inUse, d), append(cmds, c)
			select {
			case <-sampleCtx.Done():
				return
			case <-t.C:
			}
		}
	})

	var reports []k6.BurstReport
	if *procs <= 1 {
		rep, err := b.Run(ctx)
		if err != nil {
			stopSampling()
			return err
		}
		reports = []k6.BurstReport{rep}
	} else {
		per := (b.N + *procs - 1) / *procs
		ips := max(1, b.SourceIPs / *procs)
		var lists [][]string
		for p := range *procs {
			n := min(per, b.N-p*per)
			lists = append(lists, []string{"burst", "-child", "-url", *urls, "-room", b.Room, "-n", strconv.Itoa(n),
				"-within", b.Within.String(), "-timeout", b.Timeout.String(),
				"-source-ips", strconv.Itoa(ips), "-first-ip", strconv.Itoa(p * ips), "-progress", progress.String()})
		}
		var err error
		if reports, err = k6.RunChildren[k6.BurstReport](ctx, lists, stderr); err != nil {
			stopSampling()
			return err
		}
	}
	stopSampling()
	sampled.Wait()

	run.Summary = k6.Summarise(reports...)
	run.Timeline = k6.Timeline(start, reports, admitted, inUse)
	for _, d := range inUse {
		run.DBInUseMax = max(run.DBInUseMax, d)
	}
	if len(cmds) > 1 {
		run.RedisCmdPerSec = (cmds[len(cmds)-1] - cmds[0]) / float64(len(cmds)-1)
	}
	run.AdmittedPerSec = steadyRate(run.Timeline)
	if *dbURL != "" {
		run.StockAfter, _ = roomStock(ctx, *dbURL, b.Room)
	}
	fmt.Fprintf(stdout, "mode %s\n%s", mode, run.Summary)
	if run.IdleOrderP95 > 0 {
		fmt.Fprintf(stdout, "idle order p95 %v; burst order p95 %v (%.1f× idle)\n", run.IdleOrderP95.Round(time.Millisecond),
			run.Summary.OrderP95.Round(time.Millisecond), float64(run.Summary.OrderP95)/float64(run.IdleOrderP95))
	}
	fmt.Fprintf(stdout, "DB connections in use: max %.0f; Redis commands sent by the servers: %.1f/s\n", run.DBInUseMax, run.RedisCmdPerSec)
	fmt.Fprintf(stdout, "admitted/s, server side, over the admission period (its first and last second left out): %.2f\n", run.AdmittedPerSec)
	if *dbURL != "" {
		fmt.Fprintf(stdout, "stock %d -> %d: %d sold, %d orders answered 201\n", run.StockBefore, run.StockAfter,
			run.StockBefore-run.StockAfter, run.Summary.Ordered)
	}
	if *jsonOut != "" {
		out, _ := json.MarshalIndent(run, "", " ")
		if err := os.WriteFile(*jsonOut, out, 0o644); err != nil {
			return err
		}
	}
	return run.Summary.Check(expected, *maxUnexpected)
}

// metricsEndpoints returns the metrics URL of each server: the list given
// (one per server), or each server's /metrics.
func metricsEndpoints(servers []string, list string) ([]string, error) {
	if list != "" {
		out := strings.Split(list, ",")
		if len(out) != len(servers) {
			return nil, fmt.Errorf("burst: %d -metrics-url for %d -url", len(out), len(servers))
		}
		return out, nil
	}
	// The servers serve /metrics on their private METRICS_ADDR, never on
	// the public port: only one server on the default address can be
	// guessed.
	if len(servers) > 1 {
		return nil, fmt.Errorf("burst: give -metrics-url, one per -url (each server's METRICS_ADDR)")
	}
	return []string{k6.DefaultMetricsURL}, nil
}

// steadyRate is the mean admissions per second between the first and the
// last second that admitted anyone, both left out (they are partial).
func steadyRate(tl []k6.Second) float64 {
	first, last := -1, -1
	for i, s := range tl {
		if s.Admitted > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if last-first < 3 {
		return 0
	}
	var sum float64
	for _, s := range tl[first+1 : last] {
		sum += s.Admitted
	}
	return sum / float64(last-first-1)
}

func samplesOf(lat []time.Duration) []k6.Sample {
	out := make([]k6.Sample, len(lat))
	for i, l := range lat {
		out[i] = k6.Sample{Order: l, Status: http.StatusCreated}
	}
	return out
}

// resetRoomStock gives room exactly one product with stock, and no orders.
func resetRoomStock(ctx context.Context, dbURL, room string, stock int64) error {
	db, err := sqlx.Open("postgres", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	// A server that has just started may still be migrating: its ALTER
	// TABLEs and this reset can deadlock, or the tables may not exist yet.
	// Both pass once the migrations are done, so the reset is tried again.
	for deadline := time.Now().Add(15 * time.Second); ; {
		err := resetOnce(ctx, db, room, stock)
		var pe *pq.Error
		if err == nil || !errors.As(err, &pe) || (pe.Code != "40P01" && pe.Code != "42P01") || time.Now().After(deadline) {
			if err != nil {
				return err
			}
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return waitProductCache(ctx)
}

// resetOnce replaces the room's orders and products in one transaction.
func resetOnce(ctx context.Context, db *sqlx.DB, room string, stock int64) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	defer tx.Rollback()
	steps := []struct {
		q    string
		args []any
	}{
		{`DELETE FROM orders WHERE room = $1`, []any{room}},
		{`DELETE FROM buyer_locks WHERE room = $1`, []any{room}},
		{`DELETE FROM products WHERE room = $1`, []any{room}},
		{`INSERT INTO products (room, name, price, stock) VALUES ($1, 'Flash-sale item', 49000, $2)`, []any{room, stock}},
	}
	for _, s := range steps {
		if _, err := tx.ExecContext(ctx, s.q, s.args...); err != nil {
			return fmt.Errorf("reset: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	return nil
}

// waitProductCache waits out the servers' product cache.
func waitProductCache(ctx context.Context) error {
	// The servers keep the product list for about a second: let it
	// expire, so that the first orders see the new product.
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(productListTTL):
	}
	return nil
}

// productListTTL is a little longer than the servers keep a room's
// product list in memory.
const productListTTL = 1500 * time.Millisecond

func roomStock(ctx context.Context, dbURL, room string) (int64, error) {
	db, err := sqlx.Open("postgres", dbURL)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	err = db.GetContext(ctx, &n, `SELECT COALESCE(SUM(stock), 0) FROM products WHERE room = $1`, room)
	if errors.Is(err, context.Canceled) {
		return 0, err
	}
	return n, err
}
