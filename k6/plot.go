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
	colors := []color.Color{color.RGBA{36, 86, 232, 255}, color.RGBA{220, 70, 50, 255}, color.RGBA{20, 140, 90, 255}}
	p95 := plot.New()
	p95.Title.Text = "Order latency p95 per second"
	p95.Y.Label.Text = "p95 (s)"
	p95.X.Label.Text = "seconds since the sale opened"
	adm := plot.New()
	adm.Title.Text = "Admitted per second"
	adm.Y.Label.Text = "admitted/s"
	adm.X.Label.Text = "seconds since the sale opened"
	for i, r := range runs {
		var lat, ad plotter.XYs
		for _, s := range r.Timeline {
			if s.Orders > 0 {
				lat = append(lat, plotter.XY{X: float64(s.T), Y: s.OrderP95.Seconds()})
			}
			ad = append(ad, plotter.XY{X: float64(s.T), Y: s.Admitted})
		}
		for _, pl := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{p95, lat}, {adm, ad}} {
			if len(pl.xys) == 0 {
				continue
			}
			line, err := plotter.NewLine(pl.xys)
			if err != nil {
				return fmt.Errorf("plot: %w", err)
			}
			line.Color = colors[i%len(colors)]
			line.Width = vg.Points(1.5)
			pl.p.Add(line)
			pl.p.Legend.Add(r.Name, line)
		}
	}
	p95.Legend.Top = true
	adm.Legend.Top = true
	img := vgimg.New(9*vg.Inch, 8*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(6), PadY: vg.Points(12)}
	canvases := plot.Align([][]*plot.Plot{{p95}, {adm}}, tiles, dc)
	p95.Draw(canvases[0][0])
	adm.Draw(canvases[1][0])
	return savePNG(path, img)
}
