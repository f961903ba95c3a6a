package k6

import (
	"strings"
	"testing"
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
