package k6

import (
	"math"
	"strings"
	"testing"
)

// TestServerCosts: the writes per tick are the events counter's delta over
// the hold's ticks (the issuers' tick count, or, where the server counts
// none, its seconds over the tick), the CPU its delta over the hold, per
// core and per waiting visitor; a figure the server does not export is
// unknown, never 0 by accident.
func TestServerCosts(t *testing.T) {
	// m is a scrape; ticks < 0 leaves the tick count out.
	m := func(events, ticks, cpu float64) map[string]float64 {
		out := map[string]float64{metricEvents: events, metricCPU: cpu}
		if ticks >= 0 {
			out[metricTicks] = ticks
		}
		return out
	}
	tests := []struct {
		name                  string
		mid, after            map[string]float64
		hold, tick            float64
		connected             int64
		holdTicks             float64
		writesPerTick         float64
		cpuPercent            float64
		cpuPerVisitorMicros   float64 // µs of CPU per visitor per second
		eventsKnown, cpuKnown bool
		report                []string
	}{
		{"every visitor every tick", m(1000, 7, 10), m(1000+30*15000, 37, 10+36), 30, 1, 15000, 30, 15000, 120, 80, true, true,
			[]string{"server writes per tick: 15000.0 SSE events (450000 written over 30 ticks: the servers' issuers in 30.0 s, 1.00 a second)",
				"server CPU: 36.00 s over 30.0 s = 120.0% of one core; 80.00 µs of CPU per waiting visitor per second (15000 streams)"}},
		{"a tenth of the writes", m(0, 0, 0), m(30*1500, 30, 6), 30, 1, 15000, 30, 1500, 20, 13.333, true, true, nil},
		{"six servers tick six times a second", m(0, 0, 0), m(180*100000, 180, 60), 30, 1, 100000, 180, 100000, 200, 20, true, true,
			[]string{"over 180 ticks: the servers' issuers in 30.0 s, 6.00 a second"}},
		{"no tick count, no tick given: 1 s", m(0, -1, 0), m(200, -1, 1), 20, 0, 100, 20, 10, 5, 500, true, true,
			[]string{"(200 written over 20 ticks: 20.0 s over a 1s tick)"}},
		{"no tick count, a 500 ms tick", m(0, -1, 0), m(400, -1, 1), 20, 0.5, 100, 40, 10, 5, 500, true, true,
			[]string{"over 40 ticks: 20.0 s over a 500ms tick"}},
		{"the reference: CPU only", map[string]float64{metricCPU: 1}, map[string]float64{metricCPU: 4}, 30, 1, 15000, 30, 0, 10, 6.667, false, true,
			[]string{"server writes per tick: not exported"}},
		{"no hold: nothing", m(0, 0, 0), m(100, 5, 1), 0, 1, 10, 0, 0, 0, 0, true, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Report{Mode: "sse", Connected: tt.connected, TickSeconds: tt.tick}
			r.ServerFigures(map[string]float64{}, tt.mid, tt.after, tt.hold)
			r.perConnection()
			near := func(a, b float64) bool { return math.Abs(a-b) < 0.01 }
			if !near(r.HoldTicks, tt.holdTicks) || !near(r.WritesPerTick, tt.writesPerTick) || !near(r.CPUPercent, tt.cpuPercent) ||
				!near(r.CPUPerVisitor*1e6, tt.cpuPerVisitorMicros) {
				t.Fatalf("%v ticks, writes per tick %v, CPU %v%%, %v µs per visitor-second; want %v, %v, %v, %v",
					r.HoldTicks, r.WritesPerTick, r.CPUPercent, r.CPUPerVisitor*1e6, tt.holdTicks, tt.writesPerTick, tt.cpuPercent, tt.cpuPerVisitorMicros)
			}
			if r.EventsKnown != tt.eventsKnown || r.CPUKnown != tt.cpuKnown {
				t.Fatalf("known: events %v, CPU %v; want %v, %v", r.EventsKnown, r.CPUKnown, tt.eventsKnown, tt.cpuKnown)
			}
			out := r.String()
			for _, want := range tt.report {
				if !strings.Contains(out, want) {
					t.Errorf("report lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// TestReceivedPerTick: the client's view, events timed by tick id over the
// distinct tick ids.
func TestReceivedPerTick(t *testing.T) {
	tests := []struct {
		lat  map[int64][]int32
		want float64
	}{
		{nil, 0},
		{map[int64][]int32{1: {1, 2, 3}, 2: {1}}, 2},
		{map[int64][]int32{1: make([]int32, 15000)}, 15000},
	}
	for _, tt := range tests {
		if got := (Report{Lat: tt.lat}).receivedPerTick(); got != tt.want {
			t.Errorf("%d ticks: %v per tick, want %v", len(tt.lat), got, tt.want)
		}
	}
}
