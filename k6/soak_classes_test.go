package k6

import (
	"strings"
	"testing"
	"time"
)

// TestClassify: ready events are ready, position events front or back by
// their "every" (none: front, as from a server that does not class them), and nothing is classed
// for an unclassed server or for other events.
func TestClassify(t *testing.T) {
	tests := []struct {
		name, event, data string
		classed           bool
		want              string
	}{
		{"ready", "ready", `{"status":"READY","t":5}`, true, ClassReady},
		{"position without every: front", "position", `{"rank":3,"t":5}`, true, ClassFront},
		{"every 1: front", "position", `{"rank":3,"every":1,"t":5}`, true, ClassFront},
		{"every 0: front", "position", `{"rank":3,"every":0,"t":5}`, true, ClassFront},
		{"every 2: back", "position", `{"rank":900,"every":2,"t":5}`, true, ClassBack},
		{"every 30, last field: back", "position", `{"rank":9000,"t":5,"every":30}`, true, ClassBack},
		{"the reference: all only", "position", `{"rank":3,"t":5}`, false, ""},
		{"the reference never has ready", "ready", `{"t":5}`, false, ""},
		{"soldout: all only", "soldout", `{"soldOut":true,"t":5}`, true, ""},
		{"a widget's room event: all only", "room", `{"waiting":5,"t":5}`, true, ""},
		{"no event name: all only", "", `{"rank":3,"t":5}`, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classify([]byte(tt.event), []byte(tt.data), tt.classed); got != tt.want {
				t.Fatalf("classify(%q, %s, %v) = %q, want %q", tt.event, tt.data, tt.classed, got, tt.want)
			}
		})
	}
}

// TestClassDelays: each class from its own samples; "all" is every event
// with a tick id and the ready events; an empty class says none.
func TestClassDelays(t *testing.T) {
	ms := func(n ...int32) []int32 {
		for i := range n {
			n[i] *= 1000
		}
		return n
	}
	tests := []struct {
		name    string
		lat     map[int64][]int32
		classes map[string][]int32
		want    map[string]ClassDelay
	}{
		{"classed",
			map[int64][]int32{7: ms(10, 20, 30), 8: ms(40, 90)},
			map[string][]int32{ClassReady: ms(5), ClassFront: ms(10, 20), ClassBack: ms(30, 40, 90)},
			map[string]ClassDelay{
				ClassAll:   {Events: 6, P50: 20 * time.Millisecond, P99: 90 * time.Millisecond, Max: 90 * time.Millisecond},
				ClassReady: {Events: 1, P50: 5 * time.Millisecond, P99: 5 * time.Millisecond, Max: 5 * time.Millisecond},
				ClassFront: {Events: 2, P50: 10 * time.Millisecond, P99: 20 * time.Millisecond, Max: 20 * time.Millisecond},
				ClassBack:  {Events: 3, P50: 40 * time.Millisecond, P99: 90 * time.Millisecond, Max: 90 * time.Millisecond},
			}},
		{"the reference: all only",
			map[int64][]int32{1: ms(1, 2), 2: ms(3)}, nil,
			map[string]ClassDelay{
				ClassAll:   {Events: 3, P50: 2 * time.Millisecond, P99: 3 * time.Millisecond, Max: 3 * time.Millisecond},
				ClassReady: {}, ClassFront: {}, ClassBack: {},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classDelays(tt.lat, tt.classes)
			if len(got) != 4 || got[0].Class != ClassAll {
				t.Fatalf("classes %+v, want all, ready, front, back", got)
			}
			for _, d := range got {
				want := tt.want[d.Class]
				want.Class = d.Class
				if d != want {
					t.Errorf("%s: %+v, want %+v", d.Class, d, want)
				}
			}
			out := Report{Mode: "sse", Lat: tt.lat, Classes: tt.classes}
			out.latencyStats()
			if s := out.String(); !strings.Contains(s, "delay by priority class") || !strings.Contains(s, "  all   p50 ") {
				t.Fatalf("report lacks the classes:\n%s", s)
			}
		})
	}
}
