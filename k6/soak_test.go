package k6

import (
	"strings"
	"testing"
	"time"
)

// TestSoakCountsItsOwnConnections: the per-connection memory divides by
// the soak's own connections, and a server figure that other clients move
// is a loud warning, never a silent number.
func TestSoakCountsItsOwnConnections(t *testing.T) {
	const mib = 1 << 20
	scrape := func(rss, sse, cmds float64) map[string]float64 {
		return map[string]float64{metricRSS: rss, metricSSE: sse, metricCommands: cmds}
	}
	tests := []struct {
		name             string
		before, mid, aft map[string]float64
		connected        int64
		mode             string
		perConnKiB       float64
		serverConns      float64
		report           []string // lines the report must hold
		notInReport      []string
	}{
		{"others connected before: not counted", scrape(40*mib, 300, 0), scrape(50*mib, 2348, 100), scrape(60*mib, 2348, 200),
			2048, "sse", 10, 2048, []string{"10.00 KiB per connection, over the soak's own 2048 connections", "gained during the soak: 2048 (it had 300 before)"},
			[]string{"WARNING"}},
		{"others connected meanwhile: a warning", scrape(40*mib, 0, 0), scrape(41*mib, 350, 100), scrape(41*mib, 350, 200),
			50, "sse", 20.48, 350, []string{"went from 0 to 350 during the soak, but the soak opened 50", "count the soak's own 50", "rough"}, nil},
		{"others left meanwhile: clamped, and a warning", scrape(40*mib, 300, 0), scrape(60*mib, 200, 100), scrape(60*mib, 200, 200),
			2048, "sse", 10, 0, []string{"WARNING: the server's SSE connections went from 300 to 300"}, nil},
		{"RSS fell: no figure, and a warning", scrape(40*mib, 0, 0), scrape(39*mib, 50, 100), scrape(39*mib, 50, 200),
			50, "sse", 0, 50, []string{"no per-connection figure", "WARNING: the server's RSS fell during the soak (40.0 -> 39.0 MiB)"},
			[]string{"KiB per connection"}},
		{"a server without the SSE count: no SSE line", map[string]float64{metricRSS: 40 * mib}, map[string]float64{metricRSS: 50 * mib, metricCommands: 100},
			map[string]float64{metricRSS: 60 * mib, metricCommands: 200}, 2048, "sse", 10, 0, []string{"10.00 KiB per connection"}, []string{"WARNING", "SSE connections"}},
		{"polling: no SSE count", scrape(40*mib, 5, 0), scrape(50*mib, 5, 100), scrape(60*mib, 5, 200),
			2048, "poll", 10, 0, []string{"10.00 KiB per connection"}, []string{"WARNING", "SSE connections"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Report{Mode: tt.mode, Connected: tt.connected}
			r.ServerFigures(tt.before, tt.mid, tt.aft, 10)
			r.perConnection()
			out := r.String()
			if got := r.RSSPerConn / 1024; got < tt.perConnKiB-0.01 || got > tt.perConnKiB+0.01 {
				t.Errorf("%.2f KiB per connection, want %.2f", got, tt.perConnKiB)
			}
			if r.ServerConns != tt.serverConns || r.CommandsPerSec != 10 {
				t.Errorf("server gained %v connections and sent %v commands/s, want %v and 10", r.ServerConns, r.CommandsPerSec, tt.serverConns)
			}
			for _, want := range tt.report {
				if !strings.Contains(out, want) {
					t.Errorf("report lacks %q:\n%s", want, out)
				}
			}
			for _, not := range tt.notInReport {
				if strings.Contains(out, not) {
					t.Errorf("report has %q:\n%s", not, out)
				}
			}
		})
	}
}

// TestMergeReportsClasses: the children's classed samples merge exactly,
// and the parent's server-side costs divide by the merged streams.
func TestMergeReportsClasses(t *testing.T) {
	c1 := Report{Mode: "sse", Connected: 2, Lat: map[int64][]int32{5: {1000, 2000}}, Classes: map[string][]int32{ClassFront: {1000}, ClassBack: {2000}}}
	c2 := Report{Mode: "sse", Connected: 3, Lat: map[int64][]int32{5: {3000}}, Classes: map[string][]int32{ClassFront: {3000}, ClassReady: {500}}}
	server := Report{TickSeconds: 1}
	server.ServersFigures([]SoakServer{{URL: "a"}, {URL: "b"}},
		[]map[string]float64{{metricCPU: 0, metricEvents: 0}, {metricCPU: 0, metricEvents: 0}},
		[]map[string]float64{{metricCPU: 0, metricEvents: 0}, {metricCPU: 0, metricEvents: 0}},
		[]map[string]float64{{metricCPU: 1, metricEvents: 20}, {metricCPU: 1, metricEvents: 30}}, 10)
	m := MergeReports(server, []Report{c1, c2})
	tests := []struct {
		class  string
		events int
		max    time.Duration
	}{
		{ClassAll, 4, 3 * time.Millisecond},
		{ClassReady, 1, 500 * time.Microsecond},
		{ClassFront, 2, 3 * time.Millisecond},
		{ClassBack, 1, 2 * time.Millisecond},
	}
	for i, tt := range tests {
		if d := m.Delays[i]; d.Class != tt.class || d.Events != tt.events || d.Max != tt.max {
			t.Errorf("class %d: %+v, want %s with %d events, max %v", i, d, tt.class, tt.events, tt.max)
		}
	}
	if m.WritesPerTick != 5 || m.CPUPercent != 20 || m.CPUPerVisitor != 2.0/10/5 || len(m.Servers) != 2 {
		t.Fatalf("writes per tick %v, CPU %v%%, %v s per visitor-second, %d servers; want 5, 20, 0.04, 2", m.WritesPerTick, m.CPUPercent, m.CPUPerVisitor, len(m.Servers))
	}
}
