package k6

import (
	"testing"
	"time"
)

// TestAdaptiveValidate: the adaptive room's settings, its start rate
// among them, are checked before any server is touched.
func TestAdaptiveValidate(t *testing.T) {
	good := Adaptive{RoomURL: "http://127.0.0.1:1", ProxyURL: "http://127.0.0.1:2", MetricsURL: "http://127.0.0.1:3/metrics",
		AdminToken: "t", Room: "r", ShopAddr: "127.0.0.1:4", Schedule: Schedule{{Capacity: 60, For: time.Minute}},
		Work: time.Second, Adaptive: true, MinRate: 10, MaxRate: 200, TargetP95: 1500 * time.Millisecond,
		Line: 400, Timeout: 5 * time.Minute, SourceIPs: 1}
	tests := []struct {
		name  string
		start float64
		want  float64 // the rate the room is made with; 0: invalid
	}{
		{"no start rate: minRate", 0, 10},
		{"calibrate's rate", 48, 48},
		{"at maxRate", 200, 200},
		{"under minRate", 5, 0},
		{"over maxRate", 201, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := good
			a.StartRate = tt.start
			err := a.Validate()
			if (err == nil) != (tt.want > 0) {
				t.Fatalf("Validate() = %v, want ok %v", err, tt.want > 0)
			}
			if tt.want > 0 && a.startRate() != tt.want {
				t.Fatalf("startRate() = %g, want %g", a.startRate(), tt.want)
			}
		})
	}
}
