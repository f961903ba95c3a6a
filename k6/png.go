package k6

import (
	"fmt"
	"os"

	"gonum.org/v1/plot/vg/vgimg"
)

func savePNG(path string, img *vgimg.Canvas) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plot: write %s: %w", path, err)
	}
	return f.Close()
}
