package k6

import (
	"testing"
	"time"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// The second seed's measured table: the knee is at 60, 50 held, and with a
// 20% margin the recommendation is the 40 the seed chose.
var seedSteps = []Step{
	{Target: 20, Actual: 19.8, P95: ms(104), FailRate: 0.0060},
	{Target: 30, Actual: 29.6, P95: ms(356), FailRate: 0.0055},
	{Target: 40, Actual: 39.5, P95: ms(140), FailRate: 0.0056},
	{Target: 50, Actual: 49.4, P95: ms(140), FailRate: 0.0057},
	{Target: 60, Actual: 58.1, P95: ms(13900), FailRate: 0.0048},
	{Target: 70, Actual: 65.7, P95: ms(17600), FailRate: 0.0048},
}

func TestKnee(t *testing.T) {
	tests := []struct {
		name  string
		steps []Step
		knee  int
		rate  float64
		found bool
	}{
		{"the seed's table", seedSteps, 4, 40, true},
		{"throughput falls behind", []Step{{Target: 20, Actual: 20, P95: ms(50)}, {Target: 30, Actual: 30, P95: ms(60)}, {Target: 40, Actual: 31, P95: ms(70)}}, 2, 24, true},
		{"failures rise", []Step{{Target: 20, Actual: 20, P95: ms(50)}, {Target: 30, Actual: 30, P95: ms(50), FailRate: 0.2}}, 1, 16, true},
		{"no knee in range", []Step{{Target: 20, Actual: 20, P95: ms(50)}, {Target: 30, Actual: 30, P95: ms(55)}}, -1, 24, false},
		{"a blip is not a knee", []Step{{Target: 20, Actual: 20, P95: ms(100)}, {Target: 30, Actual: 30, P95: ms(600)}, {Target: 40, Actual: 40, P95: ms(120)}}, -1, 32, false},
		{"broken from the start", []Step{{Target: 20, Actual: 5, P95: ms(9000)}}, 0, 0, true},
		{"empty", nil, -1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Knee(tt.steps); got != tt.knee {
				t.Fatalf("Knee = %d, want %d", got, tt.knee)
			}
			rate, _, found := Recommend(tt.steps, 0.2)
			if rate != tt.rate || found != tt.found {
				t.Fatalf("Recommend = %v (found %v), want %v (found %v)", rate, found, tt.rate, tt.found)
			}
		})
	}
}
