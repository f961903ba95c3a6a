package views

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func series(n int, f func(i int) float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = f(i)
	}
	return v
}

func TestDownsample(t *testing.T) {
	nan := math.NaN()
	spike := series(600, func(i int) float64 {
		if i == 301 {
			return 900
		}
		return 1
	})
	tests := []struct {
		name   string
		in     []float64
		n      int
		want   int     // points out
		top    float64 // highest point out
		nanOut int     // buckets with nothing recorded
	}{
		{"empty", nil, 120, 0, math.NaN(), 0},
		{"shorter than n", []float64{1, 2, 3}, 120, 3, 3, 0},
		{"ten minutes", series(600, func(i int) float64 { return float64(i) }), 120, 120, 599, 0},
		{"601 seconds", series(601, func(int) float64 { return 2 }), 120, 101, 2, 0},
		{"a one-second spike survives", spike, 120, 120, 900, 0},
		{"NaN, infinities and negatives", []float64{nan, math.Inf(1), -5, math.Inf(-1)}, 2, 2, 0, 1},
		{"all unrecorded", series(600, func(int) float64 { return nan }), 120, 120, math.NaN(), 120},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Downsample(tt.in, tt.n)
			if len(out) != tt.want || len(out) > tt.n {
				t.Fatalf("%d points, want %d (at most %d)", len(out), tt.want, tt.n)
			}
			top, nans := math.NaN(), 0
			for _, v := range out {
				if math.IsNaN(v) {
					nans++
					continue
				}
				if v < 0 || math.IsInf(v, 0) {
					t.Errorf("point %v was not cleaned", v)
				}
				if math.IsNaN(top) || v > top {
					top = v
				}
			}
			if nans != tt.nanOut {
				t.Errorf("%d unrecorded buckets, want %d", nans, tt.nanOut)
			}
			if !(top == tt.top || math.IsNaN(top) && math.IsNaN(tt.top)) {
				t.Errorf("highest point %v, want %v", top, tt.top)
			}
		})
	}
}

var coord = regexp.MustCompile(`-?[0-9.]+`)

func TestPlot(t *testing.T) {
	en := DashTextFor("en")
	tests := []struct {
		name     string
		c        Chart
		path     bool // a line is drawn
		bars     int  // bars drawn
		now, max string
		label    string // part of the aria label
	}{
		{"empty", Chart{Name: "Waiting"}, false, 0, "—", "0", "nothing recorded"},
		{"unrecorded seconds only", Chart{Name: "Waiting", Values: series(600, func(int) float64 { return math.NaN() })}, false, 0, "—", "0", "nothing recorded"},
		{"all zero line", Chart{Name: "Waiting", Values: make([]float64, 600)}, true, 0, "0", "0", "Waiting: 0 now, at most 0"},
		{"all zero bars draw no bar", Chart{Name: "Orders", Kind: ChartBar, Unit: UnitRate, Values: make([]float64, 600)}, false, 0, "0", "0", "Orders: 0 now"},
		{"a spike", Chart{Name: "Waiting", Values: series(600, func(i int) float64 {
			if i == 450 {
				return 12345
			}
			return 10
		})}, true, 0, "10", "12,345", "at most 12,345"},
		{"bars of a spike", Chart{Name: "Orders", Kind: ChartBar, Unit: UnitRate, Values: series(600, func(i int) float64 {
			if i == 10 {
				return 7
			}
			return 0
		})}, false, 1, "0", "7", "at most 7"},
		{"NaN and negatives guarded", Chart{Name: "p95", Unit: UnitMillis, Values: []float64{-3, math.NaN(), math.Inf(1), 1500, math.NaN()}}, true, 0, "1.5 s", "1.5 s", "p95: 1.5 s now"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Plot(tt.c, en)
			if (p.Path != "") != tt.path || len(p.Bars) != tt.bars {
				t.Fatalf("path %q and %d bars; want a path %v and %d bars", p.Path, len(p.Bars), tt.path, tt.bars)
			}
			if p.Now != tt.now || p.Max != tt.max {
				t.Errorf("now %q max %q, want %q and %q", p.Now, p.Max, tt.now, tt.max)
			}
			if !strings.Contains(p.Label, tt.label) {
				t.Errorf("label %q lacks %q", p.Label, tt.label)
			}
			// Every coordinate is a finite number inside the viewBox.
			var nums []string
			nums = append(nums, coord.FindAllString(p.Path, -1)...)
			for _, b := range p.Bars {
				nums = append(nums, b.X, b.Y, b.W, b.H)
			}
			for _, s := range nums {
				f, err := strconv.ParseFloat(s, 64)
				if err != nil || f < 0 || f > chartW {
					t.Errorf("coordinate %q is outside the chart", s)
				}
			}
		})
	}
}

// TestPlotScale: the highest point touches the top of the plot and zero
// the axis, whatever the values.
func TestPlotScale(t *testing.T) {
	p := Plot(Chart{Name: "w", Values: []float64{0, 50, 100}}, DashTextFor("en"))
	want := "M" + num(plotLeft+0.5*(plotRight-plotLeft)/3) + " " + num(plotBottom)
	if !strings.HasPrefix(p.Path, want) || !strings.HasSuffix(p.Path, " "+num(plotTop)) {
		t.Fatalf("path %q: want it to start at %q on the axis and end at the top", p.Path, want)
	}
	// A gap breaks the line into two.
	p = Plot(Chart{Name: "w", Values: []float64{1, 2, math.NaN(), 3, 4}}, DashTextFor("en"))
	if strings.Count(p.Path, "M") != 2 {
		t.Errorf("path %q: want two pieces around the gap", p.Path)
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		v    float64
		u    Unit
		want string
	}{
		{0, UnitCount, "0"},
		{1234567, UnitCount, "1,234,567"},
		{-4, UnitCount, "0"},
		{math.NaN(), UnitRate, "—"},
		{math.Inf(1), UnitCount, "—"},
		{0.45, UnitRate, "0.5"},
		{3, UnitRate, "3"},
		{1250.4, UnitRate, "1,250"},
		{85.4, UnitMillis, "85 ms"},
		{1249, UnitMillis, "1.2 s"},
		{1e300, UnitCount, "1,000,000,000,000,000"},
	}
	for _, tt := range tests {
		if got := FormatValue(tt.v, tt.u, "en"); got != tt.want {
			t.Errorf("FormatValue(%v, %v) = %q, want %q", tt.v, tt.u, got, tt.want)
		}
	}
}

// TestChartViewIsAccessible: the SVG has a role, a label and a title that
// say the latest value, and no script or style attribute.
func TestChartViewIsAccessible(t *testing.T) {
	html := render(t, ChartView(Chart{ID: "dash-chart-x", Name: "Waiting <b>", Class: "c-wait", Values: []float64{1, 2, 3}}, DashTextFor("en")))
	for _, want := range []string{`id="dash-chart-x"`, `role="img"`, `aria-label="Waiting &lt;b&gt;: 3 now, at most 3 in the last 10 minutes"`, "<title>Waiting &lt;b&gt;: 3 now", `class="chart-line"`} {
		if !strings.Contains(html, want) {
			t.Errorf("chart lacks %s:\n%s", want, html)
		}
	}
	for _, bad := range []string{"<script", "style=", "<b>", "NaN"} {
		if strings.Contains(html, bad) {
			t.Errorf("chart has %s:\n%s", bad, html)
		}
	}
}
