package share_test

import (
	"bytes"
	"image/png"
	"regexp"
	"strconv"
	"testing"

	"github.com/makiuchi-d/gozxing"
	gzqr "github.com/makiuchi-d/gozxing/qrcode"

	"waitingroom/server/share"
)

// TestQRDecodes draws short links to PNG and reads them back with an
// independent decoder (gozxing, a port of ZXing), and checks the SVG's
// path covers exactly the dark modules.
func TestQRDecodes(t *testing.T) {
	for _, url := range []string{
		"https://shop.example/s/Ab3dE6g9",
		"http://127.0.0.1:8080/s/ZZZZZZZZ",
		"https://매장.example/s/0123456789abcdef",
	} {
		modules, err := share.QRModules(url)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := share.WritePNG(&buf, modules); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() < 300 || b.Dx() != b.Dy() {
			t.Fatalf("%s: PNG of %v, want a square of at least 300 px", url, b)
		}
		bmp, err := gozxing.NewBinaryBitmapFromImage(img)
		if err != nil {
			t.Fatal(err)
		}
		res, err := gzqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
		if err != nil {
			t.Fatalf("%s: decoding the PNG: %v", url, err)
		}
		if res.GetText() != url {
			t.Fatalf("decoded %q, want %q", res.GetText(), url)
		}
		if ec := res.GetResultMetadata()[gozxing.ResultMetadataType_ERROR_CORRECTION_LEVEL]; ec != "Q" && ec != "H" {
			t.Errorf("%s: error correction %v, want Q or H", url, ec)
		}
		// The quiet zone: the border of 4 modules is white.
		scale := img.Bounds().Dx() / (len(modules) + 2*share.QuietZone)
		for i := 0; i < share.QuietZone*scale; i++ {
			if r, _, _, _ := img.At(i, i).RGBA(); r == 0 {
				t.Fatalf("%s: pixel (%d,%d) of the quiet zone is dark", url, i, i)
			}
		}

		buf.Reset()
		if err := share.WriteSVG(&buf, modules); err != nil {
			t.Fatal(err)
		}
		if got, want := svgModules(t, buf.String(), len(modules)), modules; !equalBits(got, want) {
			t.Fatalf("%s: the SVG's modules differ from the encoder's", url)
		}
	}
}

var svgRun = regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-(\d+)z`)

// svgModules reads WriteSVG's path back into modules.
func svgModules(t *testing.T, svg string, n int) [][]bool {
	t.Helper()
	out := make([][]bool, n)
	for i := range out {
		out[i] = make([]bool, n)
	}
	for _, m := range svgRun.FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.Atoi(m[1])
		y, _ := strconv.Atoi(m[2])
		run, _ := strconv.Atoi(m[3])
		for i := range run {
			out[y-share.QuietZone][x-share.QuietZone+i] = true
		}
	}
	return out
}

func equalBits(a, b [][]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for y := range a {
		if len(a[y]) != len(b[y]) {
			return false
		}
		for x := range a[y] {
			if a[y][x] != b[y][x] {
				return false
			}
		}
	}
	return true
}
