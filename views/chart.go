package views

import (
	"math"
	"strconv"
	"strings"
)

// ChartKind is how a chart draws its values.
type ChartKind int

const (
	// ChartLine draws a line, broken where no second was recorded.
	ChartLine ChartKind = iota
	// ChartBar draws one bar a point.
	ChartBar
)

// Unit is how a figure's value reads.
type Unit int

const (
	// UnitCount is a whole number: 1,234.
	UnitCount Unit = iota
	// UnitRate is per second: 0.4, 12.5, 1,250.
	UnitRate
	// UnitMillis is milliseconds: 85 ms, 1.2 s.
	UnitMillis
)

// ChartPoints is the most points a chart draws: the ten minutes of
// one-second values are taken in buckets so that no chart has more.
const ChartPoints = 120

// The chart's viewBox and its plot area, in SVG user units. The SVG keeps
// its aspect ratio, so the labels scale with it.
const (
	chartW     = 320
	chartH     = 110
	plotLeft   = 44.0
	plotRight  = 316.0
	plotTop    = 8.0
	plotBottom = 88.0
)

// Chart is one small chart of the dashboard.
type Chart struct {
	// ID is the element id of the chart's figure.
	ID string
	// Name is the chart's heading: "Waiting".
	Name string
	// Class colours the chart (console-dashboard.css): "c-wait".
	Class string
	Kind  ChartKind
	Unit  Unit
	// Values are one a second, oldest first; NaN where no second was
	// recorded. Infinities count as unrecorded and negatives as 0.
	Values []float64
}

// Bar is one bar of a bar chart, in viewBox units.
type Bar struct {
	X, Y, W, H string
}

// ChartPlot is a chart drawn: what its SVG shows.
type ChartPlot struct {
	// Path is the line's d attribute; "" when there is nothing to draw.
	Path string
	Bars []Bar
	// Max and Min are the y axis's labels (Min is always zero: the
	// charts start from nothing, so that a bar's height means its value).
	Max, Min string
	// Now is the latest recorded value, or "—".
	Now string
	// Label describes the chart to a screen reader, and titles it.
	Label string
}

// Downsample takes values (one a second) in at most n buckets of equal
// width, keeping each bucket's highest recorded value, so that a spike
// of one second still shows. A bucket with nothing recorded is NaN. NaN
// and infinities are unrecorded; negatives are 0.
func Downsample(values []float64, n int) []float64 {
	if n <= 0 || len(values) == 0 {
		return nil
	}
	size := (len(values) + n - 1) / n
	out := make([]float64, 0, (len(values)+size-1)/size)
	for start := 0; start < len(values); start += size {
		best := math.NaN()
		for _, v := range values[start:min(start+size, len(values))] {
			v = clean(v)
			if !math.IsNaN(v) && (math.IsNaN(best) || v > best) {
				best = v
			}
		}
		out = append(out, best)
	}
	return out
}

// clean makes v a value a chart can draw: NaN when unrecorded (NaN or an
// infinity), 0 when negative.
func clean(v float64) float64 {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return math.NaN()
	case v < 0:
		return 0
	}
	return v
}

// Latest returns the last recorded value of values, and whether there is
// one.
func Latest(values []float64) (float64, bool) {
	for i := len(values) - 1; i >= 0; i-- {
		if v := clean(values[i]); !math.IsNaN(v) {
			return v, true
		}
	}
	return 0, false
}

// Plot draws c in the language of t.
func Plot(c Chart, t DashText) ChartPlot {
	pts := Downsample(c.Values, ChartPoints)
	top := 0.0
	for _, v := range pts {
		if !math.IsNaN(v) {
			top = max(top, v)
		}
	}
	p := ChartPlot{Max: FormatValue(top, c.Unit, t.Lang), Min: FormatValue(0, c.Unit, t.Lang), Now: "—"}
	now, ok := Latest(c.Values)
	if !ok {
		p.Label = Fill(t.ChartEmpty, "name", c.Name)
		return p
	}
	p.Now = FormatValue(now, c.Unit, t.Lang)
	p.Label = Fill(Fill(Fill(t.ChartLabel, "name", c.Name), "now", p.Now), "max", p.Max)
	scale := top
	if scale <= 0 {
		scale = 1 // all zero: a flat line on the axis
	}
	step := (plotRight - plotLeft) / float64(len(pts))
	y := func(v float64) float64 { return plotBottom - v/scale*(plotBottom-plotTop) }
	var d strings.Builder
	pen := false
	for i, v := range pts {
		x := plotLeft + (float64(i)+0.5)*step
		if math.IsNaN(v) {
			pen = false
			continue
		}
		switch c.Kind {
		case ChartBar:
			if v > 0 {
				w := max(step*0.8, 0.5)
				p.Bars = append(p.Bars, Bar{X: num(x - w/2), Y: num(y(v)), W: num(w), H: num(plotBottom - y(v))})
			}
		default:
			if pen {
				d.WriteString(" L")
			} else {
				if d.Len() > 0 {
					d.WriteByte(' ')
				}
				d.WriteString("M")
				// A lone point after a gap still shows: a short tick.
				if i+1 >= len(pts) || math.IsNaN(pts[i+1]) {
					d.WriteString(num(x-step/2) + " " + num(y(v)) + " L")
				}
			}
			d.WriteString(num(x) + " " + num(y(v)))
			pen = true
		}
	}
	p.Path = d.String()
	return p
}

// num writes a coordinate with one decimal.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// FormatValue writes v in unit for lang; "—" when v is not a number.
func FormatValue(v float64, u Unit, lang string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	v = min(max(v, 0), 1e15) // no figure is larger; keeps the int64 conversions defined
	switch u {
	case UnitRate:
		if v < 10 && v != math.Trunc(v) {
			return strconv.FormatFloat(math.Round(v*10)/10, 'f', 1, 64)
		}
		return FormatCount(int64(math.Round(v)))
	case UnitMillis:
		if v >= 1000 {
			return strconv.FormatFloat(math.Round(v/100)/10, 'f', 1, 64) + " s"
		}
		return strconv.FormatInt(int64(math.Round(v)), 10) + " ms"
	}
	return FormatCount(int64(math.Round(v)))
}

// FormatCount writes n with thousands separators: 1,234.
func FormatCount(n int64) string { return groupDigits(n, 0) }

// viewBox is the SVG's viewBox attribute.
func viewBox() string { return "0 0 " + strconv.Itoa(chartW) + " " + strconv.Itoa(chartH) }
