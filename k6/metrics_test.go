package k6

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestScrapeRoom: a room's series only, summed and by a label; another
// room's never.
func TestScrapeRoom(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `# HELP waitingroom_adaptive_rate x
waitingroom_adaptive_rate{room="a"} 40
waitingroom_adaptive_rate{room="b"} 7
waitingroom_adaptive_decisions_total{reason="increase",room="a"} 5
waitingroom_adaptive_decisions_total{reason="cut_latency",room="a"} 2
waitingroom_adaptive_decisions_total{reason="increase",room="b"} 9
waitingroom_waiting{room="a"} 300
waitingroom_up 1
`)
	}))
	defer srv.Close()
	tests := []struct {
		room, by string
		names    []string
		want     map[string]float64
	}{
		{"a", "", []string{"waitingroom_adaptive_rate", "waitingroom_waiting"}, map[string]float64{"waitingroom_adaptive_rate": 40, "waitingroom_waiting": 300}},
		{"a", "reason", []string{"waitingroom_adaptive_decisions_total"}, map[string]float64{"waitingroom_adaptive_decisions_total": 7,
			"waitingroom_adaptive_decisions_total/increase": 5, "waitingroom_adaptive_decisions_total/cut_latency": 2}},
		{"b", "", []string{"waitingroom_adaptive_rate", "waitingroom_waiting"}, map[string]float64{"waitingroom_adaptive_rate": 7}},
		{"c", "", []string{"waitingroom_adaptive_rate", "waitingroom_up"}, map[string]float64{}},
	}
	for _, tt := range tests {
		got, err := ScrapeRoom(context.Background(), srv.URL, tt.room, tt.by, tt.names...)
		if err != nil || !maps.Equal(got, tt.want) {
			t.Fatalf("room %s by %q: %v %v, want %v", tt.room, tt.by, got, err, tt.want)
		}
	}
}
