package k6

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestParseSoakServers: -url and -metrics-url pair up one to one (a single
// server may leave the metrics URL to its default), -gc-url is one per
// server or none, and no server is listed twice.
func TestParseSoakServers(t *testing.T) {
	tests := []struct {
		name, urls, metrics, gc string
		want                    []SoakServer
		err                     string
	}{
		{"one server, default metrics", "http://127.0.0.1:8080", "", "", []SoakServer{{URL: "http://127.0.0.1:8080", MetricsURL: DefaultMetricsURL}}, ""},
		{"one server", "http://127.0.0.1:1", "http://127.0.0.1:2/metrics", "http://127.0.0.1:3/gc",
			[]SoakServer{{"http://127.0.0.1:1", "http://127.0.0.1:2/metrics", "http://127.0.0.1:3/gc"}}, ""},
		{"three servers, spaces trimmed", "http://127.0.0.1:1, http://127.0.0.1:3,http://127.0.0.1:5", "http://127.0.0.1:2/metrics,http://127.0.0.1:4/metrics , http://127.0.0.1:6/metrics", "",
			[]SoakServer{{URL: "http://127.0.0.1:1", MetricsURL: "http://127.0.0.1:2/metrics"}, {URL: "http://127.0.0.1:3", MetricsURL: "http://127.0.0.1:4/metrics"},
				{URL: "http://127.0.0.1:5", MetricsURL: "http://127.0.0.1:6/metrics"}}, ""},
		{"several servers need their metrics URLs", "http://127.0.0.1:1,http://127.0.0.1:3", "", "", nil, "0 URLs for 2 servers"},
		{"fewer metrics URLs than servers", "http://127.0.0.1:1,http://127.0.0.1:3", "http://127.0.0.1:2/metrics", "", nil, "1 URLs for 2 servers"},
		{"more metrics URLs than servers", "http://127.0.0.1:1", "http://127.0.0.1:2/metrics,http://127.0.0.1:4/metrics", "", nil, "2 URLs for 1 servers"},
		{"GC URLs: one per server or none", "http://127.0.0.1:1,http://127.0.0.1:3", "http://127.0.0.1:2/metrics,http://127.0.0.1:4/metrics", "http://127.0.0.1:9/gc",
			nil, "-gc-url: 1 URLs for 2 servers"},
		{"an empty item", "http://127.0.0.1:1,,http://127.0.0.1:3", "a,b,c", "", nil, "item 1 is empty"},
		{"no server", " ", "", "", nil, "no server"},
		{"a server twice", "http://127.0.0.1:1,http://127.0.0.1:1", "http://127.0.0.1:2/metrics,http://127.0.0.1:4/metrics", "", nil, "listed twice"},
		{"a metrics URL twice", "http://127.0.0.1:1,http://127.0.0.1:3", "http://127.0.0.1:2/metrics,http://127.0.0.1:2/metrics", "", nil, "listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSoakServers(tt.urls, tt.metrics, tt.gc)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("%+v %v, want %+v", got, err, tt.want)
			}
		})
	}
}

// TestSoakValidatesEveryURL: every server's URLs must be on loopback, not
// only the first's.
func TestSoakValidatesEveryURL(t *testing.T) {
	soak := func(urls, metrics, gc string) Soak {
		return Soak{BaseURL: urls, MetricsURL: metrics, GCURL: gc, Room: "r", N: 10, Ramp: 10, Hold: time.Second, SourceIPs: 1}
	}
	tests := []struct {
		name string
		s    Soak
		err  string
	}{
		{"all on loopback", soak("http://127.0.0.1:1,http://localhost:3", "http://127.0.0.1:2/metrics,http://127.0.0.1:4/metrics", ""), ""},
		{"the second server elsewhere", soak("http://127.0.0.1:1,http://192.0.2.7:3", "http://127.0.0.1:2/metrics,http://127.0.0.1:4/metrics", ""),
			"server 1 url http://192.0.2.7:3: 192.0.2.7 is not a loopback address"},
		{"a metrics URL elsewhere", soak("http://127.0.0.1:1,http://127.0.0.1:3", "http://127.0.0.1:2/metrics,http://192.0.2.7:4/metrics", ""),
			"server 1 metrics-url"},
		{"a GC URL elsewhere", soak("http://127.0.0.1:1", "http://127.0.0.1:2/metrics", "http://192.0.2.7:5/gc"), "server 0 gc-url"},
		{"not http", soak("ftp://127.0.0.1:1", "http://127.0.0.1:2/metrics", ""), "bad URL"},
		{"lists of different lengths", soak("http://127.0.0.1:1,http://127.0.0.1:3", "http://127.0.0.1:2/metrics", ""), "1 URLs for 2 servers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Validate()
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("Validate: %v, want %q", err, tt.err)
			}
		})
	}
}

// TestServersFigures: the figures of several servers are their sums (RSS
// delta over the soak's streams, commands, writes, CPU), and each server's
// share is listed; a single server lists no shares.
func TestServersFigures(t *testing.T) {
	const mib = 1 << 20
	scrape := func(rss, sse, cmds, events, cpu float64) map[string]float64 {
		return map[string]float64{metricRSS: rss, metricSSE: sse, metricCommands: cmds, metricEvents: events, metricCPU: cpu}
	}
	withTicks := func(m map[string]float64, ticks float64) map[string]float64 {
		m[metricTicks] = ticks
		return m
	}
	servers := []SoakServer{{URL: "http://127.0.0.1:1"}, {URL: "http://127.0.0.1:3"}, {URL: "http://127.0.0.1:5"}}
	tests := []struct {
		name               string
		servers            []SoakServer
		before, mid, after []map[string]float64
		connected          int64
		perConnKiB         float64
		commands           float64
		writesPerTick      float64
		cpuPercent         float64
		shares             []ServerShare
	}{
		{"three servers",
			servers,
			[]map[string]float64{scrape(20*mib, 0, 0, 0, 1), scrape(20*mib, 0, 0, 0, 1), scrape(20*mib, 0, 0, 0, 1)},
			[]map[string]float64{scrape(30*mib, 1000, 100, 10, 2), scrape(30*mib, 1000, 100, 10, 2), scrape(30*mib, 1000, 100, 10, 2)},
			[]map[string]float64{scrape(40*mib, 1000, 190, 1010, 4), scrape(30*mib, 1000, 280, 2010, 5), scrape(50*mib, 1000, 370, 3010, 8)},
			3000, 60 * 1024.0 / 3000, 9 + 18 + 27, 100 + 200 + 300, 20 + 30 + 60,
			[]ServerShare{{"http://127.0.0.1:1", 20 * mib, 1000, 9, 100, 20}, {"http://127.0.0.1:3", 10 * mib, 1000, 18, 200, 30},
				{"http://127.0.0.1:5", 30 * mib, 1000, 27, 300, 60}}},
		{"three servers ticking: each pushes every server's ticks",
			servers,
			[]map[string]float64{scrape(20*mib, 0, 0, 0, 1), scrape(20*mib, 0, 0, 0, 1), scrape(20*mib, 0, 0, 0, 1)},
			[]map[string]float64{withTicks(scrape(30*mib, 1000, 100, 10, 2), 5), withTicks(scrape(30*mib, 1000, 100, 10, 2), 5), withTicks(scrape(30*mib, 1000, 100, 10, 2), 5)},
			[]map[string]float64{withTicks(scrape(40*mib, 1000, 190, 3010, 4), 15), withTicks(scrape(30*mib, 1000, 280, 3010, 5), 15), withTicks(scrape(50*mib, 1000, 370, 3010, 8), 15)},
			3000, 60 * 1024.0 / 3000, 9 + 18 + 27, 9000.0 / 30, 20 + 30 + 60,
			[]ServerShare{{"http://127.0.0.1:1", 20 * mib, 1000, 9, 100, 20}, {"http://127.0.0.1:3", 10 * mib, 1000, 18, 100, 30},
				{"http://127.0.0.1:5", 30 * mib, 1000, 27, 100, 60}}},
		{"one server",
			servers[:1],
			[]map[string]float64{scrape(20*mib, 0, 0, 0, 1)}, []map[string]float64{scrape(30*mib, 1000, 100, 10, 2)},
			[]map[string]float64{scrape(40*mib, 1000, 190, 1010, 4)},
			1000, 20 * 1024.0 / 1000, 9, 100, 20, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Report{Mode: "sse", Connected: tt.connected, TickSeconds: 1}
			r.ServersFigures(tt.servers, tt.before, tt.mid, tt.after, 10)
			r.perConnection()
			near := func(a, b float64) bool { return math.Abs(a-b) < 0.01 }
			if !near(r.RSSPerConn/1024, tt.perConnKiB) || !near(r.CommandsPerSec, tt.commands) || !near(r.WritesPerTick, tt.writesPerTick) || !near(r.CPUPercent, tt.cpuPercent) {
				t.Fatalf("%.2f KiB per stream, %.1f commands/s, %.1f writes per tick, CPU %.1f%%; want %.2f, %.1f, %.1f, %.1f",
					r.RSSPerConn/1024, r.CommandsPerSec, r.WritesPerTick, r.CPUPercent, tt.perConnKiB, tt.commands, tt.writesPerTick, tt.cpuPercent)
			}
			if r.ServerConns != float64(tt.connected) || strings.Contains(r.String(), "WARNING") {
				t.Fatalf("the servers gained %v streams, want %d:\n%s", r.ServerConns, tt.connected, r.String())
			}
			if len(r.Servers) != len(tt.shares) {
				t.Fatalf("shares %+v, want %+v", r.Servers, tt.shares)
			}
			for i, s := range r.Servers {
				w := tt.shares[i]
				if s.URL != w.URL || !near(s.RSSDelta, w.RSSDelta) || s.Streams != w.Streams || !near(s.CommandsPerSec, w.CommandsPerSec) ||
					!near(s.WritesPerTick, w.WritesPerTick) || !near(s.CPUPercent, w.CPUPercent) {
					t.Errorf("server %d: %+v, want %+v", i, s, w)
				}
			}
			if len(tt.shares) > 1 && !strings.Contains(r.String(), fmt.Sprintf("server 2 http://127.0.0.1:5: RSS +30.0 MiB, 1000 streams, 27.0 Redis commands/s, %.1f writes per tick, CPU 60.0%% of one core", tt.shares[2].WritesPerTick)) {
				t.Fatalf("report lacks the last server's line:\n%s", r.String())
			}
		})
	}
}
