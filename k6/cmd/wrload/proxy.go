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
// directly at the origin and through waitingroom's reverse proxy (and,
// with -admin-token, a protected path with a live session), in
// alternating rounds of one run.
type proxyRun struct {
	Path      string    `json:"path"`
	Rounds    int       `json:"rounds"`
	Direct    proxyLeg  `json:"direct"`
	Proxy     proxyLeg  `json:"proxy"`
	Protected *proxyLeg `json:"protected,omitempty"`
	Added     proxyDiff `json:"added"` // proxy minus direct
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

// protectedPath is the path that -admin-token's room protects.
const protectedPath = "/checkout"

// proxyCommand measures the reverse proxy's overhead: it serves a
// hello-world origin on a loopback address (the server's ORIGIN_URL) and
// loads the same GET directly and through the proxy (PROXY_ADDR), round
// after round, so that both see the same machine. With -admin-token it
// also sets up a room protecting /checkout, goes through its line as one
// buyer, and loads /checkout with that session (one Redis check each).
func proxyCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	originAddr := fs.String("origin", "127.0.0.1:18091", "loopback address to serve the origin on: the server's ORIGIN_URL is http://<this>")
	proxyURL := fs.String("proxy", "", "the server's reverse-proxy listener, http://<PROXY_ADDR> (loopback)")
	base := fs.String("url", "", "the server's main listener (with -admin-token)")
	token := fs.String("admin-token", "", "the server's ADMIN_TOKEN: also measure a protected path with a live session")
	roomName := fs.String("room", "proxy-bench", "the room that -admin-token sets up to protect "+protectedPath+", deleted at the end")
	path := fs.String("path", "/", "the unprotected path to GET")
	conc := fs.Int("c", 16, "concurrent workers")
	dur := fs.Duration("d", 5*time.Second, "duration of each leg of each round (at most 10m)")
	n := fs.Int("n", 0, "stop each leg after this many requests (0: duration only)")
	rounds := fs.Int("rounds", 3, "rounds of direct, then proxied legs (1 to 20)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	_, maxUnexpected := checkFlags(fs, "")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *proxyURL == "":
		return errors.New("proxy: -proxy is required (the server's PROXY_ADDR, with ORIGIN_URL=http://" + *originAddr + ")")
	case *token != "" && *base == "":
		return errors.New("proxy: -admin-token needs -url, the server's main listener")
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
	shop := strings.TrimSuffix(*proxyURL, "/")
	if err := sameOrigin(ctx, shop+*path, nil); err != nil {
		return err
	}
	legs := []k6.Load{
		{URL: "http://" + ln.Addr().String() + *path},
		{URL: shop + *path},
	}
	if *token != "" {
		b := strings.TrimSuffix(*base, "/")
		defer func() {
			if err := k6.DeleteRoom(context.WithoutCancel(ctx), b, *roomName, *token); err != nil {
				fmt.Fprintf(stderr, "proxy: room %s stays: %v\n", *roomName, err)
			}
		}()
		session, err := protectedSession(ctx, b, *roomName, *token, shop)
		if err != nil {
			return err
		}
		hdr := http.Header{"Cookie": {session.String()}}
		if err := sameOrigin(ctx, shop+protectedPath, hdr); err != nil {
			return err
		}
		legs = append(legs, k6.Load{URL: shop + protectedPath, Header: hdr})
	}

	results := make([][]k6.Result, len(legs))
	for i := range *rounds {
		for j, l := range legs {
			l.Method, l.Concurrency, l.Duration, l.MaxRequests = http.MethodGet, *conc, *dur, *n
			res, err := l.Run(ctx)
			if err != nil {
				return fmt.Errorf("proxy: round %d: %w", i+1, err)
			}
			results[j] = append(results[j], res)
		}
		if ctx.Err() != nil {
			break
		}
	}
	out := proxyRun{Path: *path, Rounds: len(results[0]), Direct: mergeLegs(results[0]), Proxy: mergeLegs(results[1])}
	out.Added = proxyDiff{P50: out.Proxy.P50 - out.Direct.P50, P99: out.Proxy.P99 - out.Direct.P99}
	named := []struct {
		name, path string
		leg        proxyLeg
	}{{"direct", *path, out.Direct}, {"proxy", *path, out.Proxy}}
	if len(results) > 2 {
		leg := mergeLegs(results[2])
		out.Protected = &leg
		named = append(named, struct {
			name, path string
			leg        proxyLeg
		}{"protected", protectedPath + " (a live session)", leg})
	}
	if *asJSON {
		b, _ := json.Marshal(out)
		fmt.Fprintln(stdout, string(b))
	} else {
		for _, l := range named {
			fmt.Fprintf(stdout, "%-9s GET %s: %d requests, %.0f req/s, p50 %v, p99 %v, errors %d, status %v\n", l.name, l.path,
				l.leg.Requests, l.leg.RPS, l.leg.P50.Round(time.Microsecond), l.leg.P99.Round(time.Microsecond), l.leg.Errors, l.leg.Status)
		}
		fmt.Fprintf(stdout, "proxy overhead (%d rounds, -c %d): p50 +%v, p99 +%v, throughput %.0f%% of direct\n", out.Rounds, *conc,
			out.Added.P50.Round(time.Microsecond), out.Added.P99.Round(time.Microsecond), 100*out.Proxy.RPS/max(out.Direct.RPS, 1))
	}
	for _, l := range named {
		if err := k6.CheckStatus("proxy: "+l.name, l.leg.Status, l.leg.Errors, []int{http.StatusOK}, *maxUnexpected); err != nil {
			return err
		}
	}
	return nil
}

// protectedSession makes room protect /checkout on the shop at shop (the
// proxy), and returns a live session of it, got through the line.
func protectedSession(ctx context.Context, base, room, token, shop string) (*http.Cookie, error) {
	err := k6.PutRoom(ctx, base, room, token, map[string]any{"rate": 1000, "maxActive": 0, "paused": false,
		"targetURL": shop + protectedPath, "protect": []string{protectedPath}, "sessionSeconds": 3600, "sessionMode": "idle"})
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	// The proxy reads the rooms' prefixes every 2 s: a protected path
	// without a session must be refused before the session is measured.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if err := sameOrigin(ctx, shop+protectedPath, nil); err != nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("proxy: %s%s is not protected 10 s after room %s was set to protect it: is the proxy this server's?", shop, protectedPath, room)
		}
	}
	c, err := k6.GateSession(ctx, base, room)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	return c, nil
}

// sameOrigin checks that the proxy's GET of u (with hdr) answers with this
// run's origin (the hello body), so that a proxy pointed elsewhere, or a
// protected path without a session, is not measured.
func sameOrigin(ctx context.Context, u string, hdr http.Header) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("proxy: %w", err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
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
