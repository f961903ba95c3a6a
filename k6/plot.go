package k6

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Series is one run's timeline, named for the legend.
type Series struct {
	Name     string
	Timeline []Second
}

// PlotBurst draws order p95 (top) and admitted/s (bottom) over time for
// each run, and writes the PNG to path. It returns an error when the image
// cannot be written.
func PlotBurst(path string, runs []Series) error {
	colors := runColors()
	p95 := timePlot("Order latency p95 per second", "p95 (s)")
	adm := timePlot("Admitted per second", "admitted/s")
	for i, r := range runs {
		var lat, ad plotter.XYs
		for _, s := range r.Timeline {
			if s.Orders > 0 {
				lat = append(lat, plotter.XY{X: float64(s.T), Y: s.OrderP95.Seconds()})
			}
			ad = append(ad, plotter.XY{X: float64(s.T), Y: s.Admitted})
		}
		c := colors[i%len(colors)]
		for _, cv := range []curve{{p95, r.Name, lat, c, false}, {adm, r.Name, ad, c, false}} {
			if err := cv.add(); err != nil {
				return err
			}
		}
	}
	return savePlots(path, p95, adm)
}

// runColors are the colours of the runs of a plot, in turn.
func runColors() []color.Color {
	return []color.Color{color.RGBA{36, 86, 232, 255}, color.RGBA{220, 70, 50, 255}, color.RGBA{20, 140, 90, 255}}
}

// timePlot returns a plot over the seconds of a sale.
func timePlot(title, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = y
	p.X.Label.Text = "seconds since the sale opened"
	return p
}

// savePlots draws top above bottom, legends at the top, into a PNG at
// path.
func savePlots(path string, top, bottom *plot.Plot) error {
	top.Legend.Top = true
	bottom.Legend.Top = true
	img := vgimg.New(9*vg.Inch, 8*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(6), PadY: vg.Points(12)}
	canvases := plot.Align([][]*plot.Plot{{top}, {bottom}}, tiles, dc)
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])
	return savePNG(path, img)
}

// curve is one line of a plot.
type curve struct {
	p      *plot.Plot
	name   string
	xys    plotter.XYs
	c      color.Color
	dashed bool
}

func (cv curve) add() error {
	if len(cv.xys) == 0 {
		return nil
	}
	line, err := plotter.NewLine(cv.xys)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	line.Color, line.Width = cv.c, vg.Points(1.5)
	if cv.dashed {
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	cv.p.Add(line)
	cv.p.Legend.Add(cv.name, line)
	return nil
}

// PlotAdaptive draws adaptive admission's runs, named by names: the
// room's rate, the shop's served/s and its capacity (top), and the
// shop's p95 against the target (bottom), over time, into a PNG at path.
func PlotAdaptive(path, title string, runs []AdaptiveReport, names []string) error {
	colors := runColors()
	grey := color.RGBA{90, 90, 90, 255}
	top := timePlot(title, "per second")
	bottom := timePlot("The shop's p95 per second", "p95 (s)")
	for i, r := range runs {
		var rate, served, capacity, p95, target plotter.XYs
		for _, s := range r.Seconds {
			x := float64(s.T)
			rate = append(rate, plotter.XY{X: x, Y: s.Rate})
			served = append(served, plotter.XY{X: x, Y: float64(s.Served)})
			capacity = append(capacity, plotter.XY{X: x, Y: s.Capacity})
			target = append(target, plotter.XY{X: x, Y: r.Target.Seconds()})
			if s.Served > 0 {
				p95 = append(p95, plotter.XY{X: x, Y: s.P95.Seconds()})
			}
		}
		c := colors[i%len(colors)]
		curves := []curve{{top, names[i] + ": room rate", rate, c, false}, {top, names[i] + ": shop served/s", served, c, true},
			{bottom, names[i] + ": shop p95", p95, c, false}}
		if i == 0 {
			curves = append(curves, curve{top, "shop capacity (knee)", capacity, grey, false})
			if r.Target > 0 {
				curves = append(curves, curve{bottom, "target p95", target, grey, true})
			}
		}
		for _, cv := range curves {
			if err := cv.add(); err != nil {
				return err
			}
		}
	}
	return savePlots(path, top, bottom)
}
