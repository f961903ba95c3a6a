package k6

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// SoakServer is one server process a soak holds visitors on.
type SoakServer struct {
	// URL is the server's base URL, for example http://127.0.0.1:8080.
	URL string
	// MetricsURL is its private Prometheus endpoint.
	MetricsURL string
	// GCURL, when set, collects the server's garbage (see Soak.GCURL).
	GCURL string
}

// ParseSoakServers pairs the comma-separated lists of base URLs, metrics
// URLs and GC URLs: the metrics list has one URL per server (or is empty
// for a single server, which then uses DefaultMetricsURL), the GC list
// one per server or none. A URL listed twice is an error: its figures
// would count twice.
func ParseSoakServers(urls, metricsURLs, gcURLs string) ([]SoakServer, error) {
	bases, err := splitList("url", urls)
	if err != nil {
		return nil, err
	}
	if len(bases) == 0 {
		return nil, fmt.Errorf("soak: -url: no server")
	}
	metrics, err := splitList("metrics-url", metricsURLs)
	if err != nil {
		return nil, err
	}
	if len(metrics) == 0 && len(bases) == 1 {
		metrics = []string{DefaultMetricsURL}
	}
	if len(metrics) != len(bases) {
		return nil, fmt.Errorf("soak: -metrics-url: %d URLs for %d servers; give one per -url, in the same order", len(metrics), len(bases))
	}
	gcs, err := splitList("gc-url", gcURLs)
	if err != nil {
		return nil, err
	}
	if len(gcs) != 0 && len(gcs) != len(bases) {
		return nil, fmt.Errorf("soak: -gc-url: %d URLs for %d servers; give one per -url, or none", len(gcs), len(bases))
	}
	seen := map[string]bool{}
	out := make([]SoakServer, len(bases))
	for i := range bases {
		if seen[bases[i]] || seen[metrics[i]] {
			return nil, fmt.Errorf("soak: server %d (%s, %s) is listed twice", i, bases[i], metrics[i])
		}
		seen[bases[i]], seen[metrics[i]] = true, true
		out[i] = SoakServer{URL: bases[i], MetricsURL: metrics[i]}
		if len(gcs) > 0 {
			out[i].GCURL = gcs[i]
		}
	}
	return out, nil
}

// splitList splits a comma-separated flag value; an empty value is no
// items, an empty item an error.
func splitList(flag, v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	parts := strings.Split(v, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
		if parts[i] == "" {
			return nil, fmt.Errorf("soak: -%s %q: item %d is empty", flag, v, i)
		}
	}
	return parts, nil
}

// validateLoopback returns an error for a URL that is not http(s) on a
// loopback address: loads and scrapes run on loopback only.
func validateLoopback(what, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("soak: %s: bad URL %q", what, raw)
	}
	ips, err := net.LookupIP(u.Hostname())
	if err != nil || len(ips) == 0 {
		return fmt.Errorf("soak: %s: resolve %q: %v", what, u.Hostname(), err)
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return fmt.Errorf("soak: %s %s: %s is not a loopback address; loads run on loopback only", what, raw, ip)
		}
	}
	return nil
}

// validate checks every URL of the server.
func (s SoakServer) validate(i int) error {
	for _, u := range []struct{ what, url string }{{"url", s.URL}, {"metrics-url", s.MetricsURL}, {"gc-url", s.GCURL}} {
		if u.url == "" && u.what == "gc-url" {
			continue
		}
		if err := validateLoopback(fmt.Sprintf("server %d %s", i, u.what), u.url); err != nil {
			return err
		}
	}
	return nil
}

// ScrapeSoakAll reads the soak's figures of every server, in order.
func ScrapeSoakAll(ctx context.Context, servers []SoakServer) ([]map[string]float64, error) {
	out := make([]map[string]float64, len(servers))
	for i, s := range servers {
		m, err := ScrapeSoak(ctx, s.MetricsURL)
		if err != nil {
			return nil, fmt.Errorf("soak: server %d: %w", i, err)
		}
		out[i] = m
	}
	return out, nil
}

// ScrapeSoakEnd reads the soak's figures of every server at the end of the
// hold. Where the servers have GC URLs, it then collects their garbage
// until their RSS settles (see SettleMemory: the ramp's garbage is not the
// connections') and takes the memory figures from a second reading; the
// counters (events, commands, ticks, CPU) are those of the first, so that
// the collections' CPU is not the hold's.
func ScrapeSoakEnd(ctx context.Context, servers []SoakServer) ([]map[string]float64, error) {
	out, err := ScrapeSoakAll(ctx, servers)
	if err != nil || !slices.ContainsFunc(servers, func(s SoakServer) bool { return s.GCURL != "" }) {
		return out, err
	}
	if err := SettleMemory(ctx, servers); err != nil {
		return nil, err
	}
	mem, err := ScrapeSoakAll(ctx, servers)
	if err != nil {
		return nil, err
	}
	for i := range out {
		for _, name := range []string{metricRSS, metricHeap} {
			if v, ok := mem[i][name]; ok {
				out[i][name] = v
			}
		}
	}
	return out, nil
}

// sumScrapes adds the scrapes of several servers series by series: a
// series is in the sum when any server exports it.
func sumScrapes(scrapes []map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for _, m := range scrapes {
		for k, v := range m {
			out[k] += v
		}
	}
	return out
}

// WaitServerStreams waits until the servers hold streams new SSE
// connections or more beyond what they held in before (their
// waitingroom_sse_connections gauges), until the deadline, or until ctx
// ends; servers that do not export the gauge (the r3labs reference) are
// not waited for. It reports whether the count was reached.
func WaitServerStreams(ctx context.Context, servers []SoakServer, before []map[string]float64, streams float64, deadline time.Time) (bool, error) {
	want := sumScrapes(before)[metricSSE] + streams
	for {
		now, err := ScrapeSoakAll(ctx, servers)
		if err != nil {
			return false, err
		}
		sum := sumScrapes(now)
		if _, known := sum[metricSSE]; !known || sum[metricSSE] >= want {
			return known, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// ServerShare is one server's part of a many-server soak.
type ServerShare struct {
	URL string
	// RSSDelta is its RSS after the hold less before the soak (bytes).
	RSSDelta float64
	// Streams is its SSE connections at the start of the hold.
	Streams float64
	// CommandsPerSec is the Redis commands it sent per second of the hold.
	CommandsPerSec float64
	// WritesPerTick is its SSE events written per tick of the hold (every
	// server's ticks: each server pushes them all).
	WritesPerTick float64
	// CPUPercent is its CPU over the hold, in % of one core.
	CPUPercent float64
}

// ServersFigures sets the server-side figures of a soak on several
// servers from each one's three scrapes (see ServerFigures): the sums
// over the servers, and, with more than one server, each one's share.
func (r *Report) ServersFigures(servers []SoakServer, before, mid, after []map[string]float64, holdSeconds float64) {
	r.ServerFigures(sumScrapes(before), sumScrapes(mid), sumScrapes(after), holdSeconds)
	r.Servers = nil
	if len(servers) < 2 {
		return
	}
	for i, s := range servers {
		var one Report
		one.TickSeconds = r.TickSeconds
		one.ServerFigures(before[i], mid[i], after[i], holdSeconds)
		share := ServerShare{URL: s.URL, RSSDelta: one.RSSAfter - one.RSSBefore, Streams: mid[i][metricSSE],
			CommandsPerSec: one.CommandsPerSec, CPUPercent: one.CPUPercent}
		if r.HoldTicks > 0 {
			// Every server pushes every tick of the room, its own and the
			// others': its writes are over all the ticks.
			share.WritesPerTick = one.EventsWritten / r.HoldTicks
		}
		r.Servers = append(r.Servers, share)
	}
}
