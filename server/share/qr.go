package share

import (
	"bufio"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"strconv"

	"github.com/yeqown/go-qrcode/v2"
)

// QR codes of the short links, for print. github.com/yeqown/go-qrcode/v2
// encodes (error correction Q: a quarter of the code can be lost, a smudge
// or a fold on paper); its matrix is drawn here to PNG and SVG, so that
// no image writer module comes along.

// QuietZone is the blank border around the code, in modules (the standard
// asks for 4).
const QuietZone = 4

// QRModules returns the modules of text's QR code, [y][x], true for dark,
// without the quiet zone.
func QRModules(text string) ([][]bool, error) {
	code, err := qrcode.NewWith(text, qrcode.WithErrorCorrectionLevel(qrcode.ErrorCorrectionQuart),
		qrcode.WithEncodingMode(qrcode.EncModeByte))
	if err != nil {
		return nil, fmt.Errorf("share: encode a QR code: %w", err)
	}
	var m matrixWriter
	if err := code.Save(&m); err != nil {
		return nil, fmt.Errorf("share: encode a QR code: %w", err)
	}
	return m.bits, nil
}

// matrixWriter is a qrcode.Writer that keeps the matrix's modules.
type matrixWriter struct{ bits [][]bool }

func (m *matrixWriter) Write(mat qrcode.Matrix) error { m.bits = mat.Bitmap(); return nil }
func (m *matrixWriter) Close() error                  { return nil }

// qrPixels is the width a PNG aims at: about 8 cm at 200 dpi.
const qrPixels = 640

// WritePNG draws modules with the quiet zone as a black-on-white PNG of
// about qrPixels, whole pixels per module.
func WritePNG(w io.Writer, modules [][]bool) error {
	n := len(modules) + 2*QuietZone
	scale := max(4, qrPixels/n)
	img := image.NewPaletted(image.Rect(0, 0, n*scale, n*scale), color.Palette{color.White, color.Black})
	for y, row := range modules {
		for x, dark := range row {
			if !dark {
				continue
			}
			for py := (y + QuietZone) * scale; py < (y+QuietZone+1)*scale; py++ {
				off := img.PixOffset((x+QuietZone)*scale, py)
				for i := range scale {
					img.Pix[off+i] = 1
				}
			}
		}
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(w, img); err != nil {
		return fmt.Errorf("share: write a QR code PNG: %w", err)
	}
	return nil
}

// WriteSVG draws modules with the quiet zone as an SVG of one path, one
// unit per module, each row's runs of dark modules one rectangle.
func WriteSVG(w io.Writer, modules [][]bool) error {
	n := strconv.Itoa(len(modules) + 2*QuietZone)
	bw := bufio.NewWriter(w)
	bw.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ` + n + " " + n + `" width="` + n + `mm" height="` + n +
		`mm" shape-rendering="crispEdges"><rect width="100%" height="100%" fill="#fff"/><path fill="#000" d="`)
	for y, row := range modules {
		for x := 0; x < len(row); {
			if !row[x] {
				x++
				continue
			}
			run := 0
			for x+run < len(row) && row[x+run] {
				run++
			}
			bw.WriteString("M" + strconv.Itoa(x+QuietZone) + " " + strconv.Itoa(y+QuietZone) + "h" + strconv.Itoa(run) + "v1h-" + strconv.Itoa(run) + "z")
			x += run
		}
	}
	bw.WriteString(`"/></svg>` + "\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("share: write a QR code SVG: %w", err)
	}
	return nil
}
