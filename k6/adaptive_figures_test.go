package k6

import (
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// run builds a report of a 20 s knee of 100, a 20 s cut to 50 and a 20 s
// rise to 100, the rate and p95 of each second given by f.
func run(f func(t int, capacity float64) (rate float64, p95 time.Duration)) AdaptiveReport {
	r := AdaptiveReport{Schedule: "100/20s,50/20s,100/20s", Target: time.Second}
	for t := range 60 {
		c := 100.0
		if t >= 20 && t < 40 {
			c = 50
		}
		rate, p95 := f(t, c)
		r.Seconds = append(r.Seconds, AdaptiveSecond{T: t, Rate: rate, P95: p95, Served: 1, Capacity: c})
	}
	return r
}

func TestAdaptiveFigures(t *testing.T) {
	const ok, slow = 500 * time.Millisecond, 3 * time.Second
	tests := []struct {
		name   string
		report AdaptiveReport
		want   AdaptiveFigures
		misses []string
	}{
		{name: "ideal: ramps 10/s, cuts at once, settles on the knee", report: run(func(t int, c float64) (float64, time.Duration) {
			switch {
			case t < 20:
				return min(10*float64(t+1), 100), ok
			case t < 40:
				return 50, ok
			}
			return min(50+10*float64(t-39), 100), ok
		}), want: AdaptiveFigures{Converge: 8, React: 0, Settled: 50, Recover: 3}},
		{name: "slow to react, never back up", report: run(func(t int, c float64) (float64, time.Duration) {
			switch {
			case t < 20:
				return 100, ok
			case t < 28:
				return 80, slow
			case t < 40:
				return 60, ok
			}
			return 60, ok
		}), want: AdaptiveFigures{Converge: 0, React: 8, Settled: 60, SettledOff: 20, Recover: -1, Violations: 0, ViolationsAll: 8},
			misses: []string{"react: p95 back under the target after 8 s", "settled 20.0% off", "recover: 90% of the knee not reached"}},
		{name: "oscillates: every third second at 100, over the target", report: run(func(t int, c float64) (float64, time.Duration) {
			if t%3 == 0 {
				return 100, slow
			}
			return c, ok
		}), want: AdaptiveFigures{Converge: 0, Violations: 4, ViolationsAll: 4, React: -1, Settled: 70, SettledOff: 40, Recover: 0},
			misses: []string{"converge: p95 over the target in 4 of 10", "react: p95 back under the target after -1 s", "settled 40.0% off"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.report.Figures()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Knees, []float64{100, 50, 100}) {
				t.Fatalf("knees %v", got.Knees)
			}
			got.Knees = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("figures %#v\nwant    %#v", got, tt.want)
			}
			misses := strings.Join(got.Misses(), "\n")
			if len(got.Misses()) != len(tt.misses) {
				t.Fatalf("misses:\n%s\nwant %q", misses, tt.misses)
			}
			for _, m := range tt.misses {
				if !strings.Contains(misses, m) {
					t.Fatalf("no %q in the misses:\n%s", m, misses)
				}
			}
		})
	}
}

// TestPlotAdaptive: two runs drawn into a PNG of a useful size.
func TestPlotAdaptive(t *testing.T) {
	r := run(func(t int, c float64) (float64, time.Duration) { return c, time.Second })
	path := filepath.Join(t.TempDir(), "adaptive.png")
	if err := PlotAdaptive(path, "test", []AdaptiveReport{r, r}, []string{"adaptive", "fixed"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds().Dx() < 400 {
		t.Fatalf("not a PNG of a useful size: %v", err)
	}
}
