package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"waitingroom/k6"
)

// proxyRun is what `wrload proxy -json` writes: the same GET measured
// directly at the origin and through waitingroom's reverse proxy, in
// alternating rounds of one run.
type proxyRun struct {
	Path   string    `json:"path"`
	Rounds int       `json:"rounds"`
	Direct proxyLeg  `json:"direct"`
	Proxy  proxyLeg  `json:"proxy"`
	Added  proxyDiff `json:"added"` // proxy minus direct
}

type proxyLeg struct {
	Requests int           `json:"requests"`
	Errors   int           `json:"errors"`
	RPS      float64       `json:"rps"`
	P50      time.Duration `json:"p50"`
	P99      time.Duration `json:"p99"`
	Status   map[int]int   `json:"status"`
}

type proxyDiff struct {
	P50 time.Duration `json:"p50"`
	P99 time.Duration `json:"p99"`
}

// proxyCommand measures the reverse proxy's overhead: it serves a
// hello-world origin on a loopback address (the server's ORIGIN_URL) and
// loads the same GET directly and through the proxy (PROXY_ADDR), round
// after round, so that both see the same machine.
func proxyCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	originAddr := fs.String("origin", "127.0.0.1:18091", "loopback address to serve the origin on: the server's ORIGIN_URL is http://<this>")
	proxyURL := fs.String("proxy", "", "the server's reverse-proxy listener, http://<PROXY_ADDR> (loopback)")
	path := fs.String("path", "/", "the path to GET (one no room protects)")
	conc := fs.Int("c", 16, "concurrent workers")
	dur := fs.Duration("d", 5*time.Second, "duration of each leg of each round (at most 10m)")
	n := fs.Int("n", 0, "stop each leg after this many requests (0: duration only)")
	rounds := fs.Int("rounds", 3, "rounds of direct then proxied legs (1 to 20)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	_, maxUnexpected := checkFlags(fs, "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *proxyURL == "":
		return errors.New("proxy: -proxy is required (the server's PROXY_ADDR, with ORIGIN_URL=http://" + *originAddr + ")")
	case *rounds < 1 || *rounds > 20:
		return fmt.Errorf("proxy: -rounds %d out of 1..20", *rounds)
	case !strings.HasPrefix(*path, "/"):
		return fmt.Errorf("proxy: -path %q must begin with /", *path)
	}
	ln, err := net.Listen("tcp", *originAddr)
	if err != nil {
		return fmt.Errorf("proxy: origin: listen %s: %w", *originAddr, err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return fmt.Errorf("proxy: origin: %s is not a loopback address", *originAddr)
	}
	origin := &http.Server{Handler: k6.HelloHandler(), ReadHeaderTimeout: 5 * time.Second}
	go origin.Serve(ln)
	defer origin.Close()
	direct := "http://" + ln.Addr().String() + *path
	via := strings.TrimSuffix(*proxyURL, "/") + *path
	if err := sameOrigin(ctx, via); err != nil {
		return err
	}

	var legs [2][]k6.Result // direct, proxy
	for i := range *rounds {
		for j, u := range []string{direct, via} {
			res, err := k6.Load{URL: u, Method: http.MethodGet, Concurrency: *conc, Duration: *dur, MaxRequests: *n}.Run(ctx)
			if err != nil {
				return fmt.Errorf("proxy: round %d: %w", i+1, err)
			}
			legs[j] = append(legs[j], res)
		}
		if ctx.Err() != nil {
			break
		}
	}
	out := proxyRun{Path: *path, Rounds: len(legs[0]), Direct: mergeLegs(legs[0]), Proxy: mergeLegs(legs[1])}
	out.Added = proxyDiff{P50: out.Proxy.P50 - out.Direct.P50, P99: out.Proxy.P99 - out.Direct.P99}
	if *asJSON {
		b, _ := json.Marshal(out)
		fmt.Fprintln(stdout, string(b))
	} else {
		for _, l := range []struct {
			name string
			leg  proxyLeg
		}{{"direct", out.Direct}, {"proxy", out.Proxy}} {
			fmt.Fprintf(stdout, "%-6s GET %s: %d requests, %.0f req/s, p50 %v, p99 %v, errors %d, status %v\n", l.name, *path,
				l.leg.Requests, l.leg.RPS, l.leg.P50.Round(time.Microsecond), l.leg.P99.Round(time.Microsecond), l.leg.Errors, l.leg.Status)
		}
		fmt.Fprintf(stdout, "proxy overhead (%d rounds, -c %d): p50 +%v, p99 +%v, throughput %.0f%% of direct\n", out.Rounds, *conc,
			out.Added.P50.Round(time.Microsecond), out.Added.P99.Round(time.Microsecond), 100*out.Proxy.RPS/max(out.Direct.RPS, 1))
	}
	for _, l := range []struct {
		name string
		leg  proxyLeg
	}{{"proxy: direct", out.Direct}, {"proxy: through the proxy", out.Proxy}} {
		if err := k6.CheckStatus(l.name, l.leg.Status, l.leg.Errors, []int{http.StatusOK}, *maxUnexpected); err != nil {
			return err
		}
	}
	return nil
}

// sameOrigin checks that the proxy at u answers with this run's origin
// (the hello body), so that a proxy pointed elsewhere is not measured.
func sameOrigin(ctx context.Context, u string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("proxy: GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK || string(b) != "hello, world\n" {
		return fmt.Errorf("proxy: %s answered %d %.80q, not this run's origin: start the server with ORIGIN_URL set to the -origin address", u, resp.StatusCode, b)
	}
	return nil
}

// mergeLegs sums the rounds of one leg: latencies pooled, throughput over
// the legs' summed time.
func mergeLegs(rs []k6.Result) proxyLeg {
	var all []time.Duration
	var elapsed time.Duration
	leg := proxyLeg{Status: map[int]int{}}
	for _, r := range rs {
		all = append(all, r.Latencies...)
		elapsed += r.Elapsed
		leg.Errors += r.Errors
		for k, v := range r.Status {
			leg.Status[k] += v
		}
	}
	slices.Sort(all)
	leg.Requests = len(all)
	if elapsed > 0 {
		leg.RPS = float64(len(all)) / elapsed.Seconds()
	}
	leg.P50, leg.P99 = k6.Percentile(all, 50), k6.Percentile(all, 99)
	return leg
}
