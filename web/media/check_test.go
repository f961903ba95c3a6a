package media

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"testing"
)

// testImage is a w×h picture, encoded as kind ("png", "jpeg" or "gif").
func testImage(t testing.TB, kind string, w, h int) []byte {
	t.Helper()
	img := image.NewPaletted(image.Rect(0, 0, w, h), []color.Color{color.White, color.RGBA{0x24, 0x56, 0xe8, 0xff}})
	for x := range w {
		img.SetColorIndex(x, x%h, 1)
	}
	var buf bytes.Buffer
	var err error
	switch kind {
	case "png":
		err = png.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, nil)
	case "gif":
		err = gif.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// testWebP is a small lossless WebP (golang.org/x/image's test data).
func testWebP(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/tiny.webp")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testICO is a Windows icon holding one PNG of side×side.
func testICO(t testing.TB, side int) []byte {
	t.Helper()
	return icoHolding(t, testImage(t, "png", side, side))
}

// icoHolding is a Windows icon whose one image is p, said to be 32×32.
func icoHolding(t testing.TB, p []byte) []byte {
	t.Helper()
	side := 32
	var b bytes.Buffer
	le := binary.LittleEndian
	b.Write([]byte{0, 0, 1, 0, 1, 0})
	b.Write([]byte{byte(side), byte(side), 0, 0, 1, 0, 32, 0})
	binary.Write(&b, le, uint32(len(p)))
	binary.Write(&b, le, uint32(22))
	b.Write(p)
	return b.Bytes()
}

// pngClaiming is a valid 1×1 PNG whose header claims w×h: a
// decompression bomb's header.
func pngClaiming(t testing.TB, w, h uint32) []byte {
	t.Helper()
	b := bytes.Clone(testImage(t, "png", 1, 1))
	// The IHDR chunk's data starts at 16: width, height; its CRC at 29
	// covers the type and the data (12..29).
	binary.BigEndian.PutUint32(b[16:], w)
	binary.BigEndian.PutUint32(b[20:], h)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	return b
}

const svgWithScript = `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(document.cookie)</script><rect width="10" height="10"/></svg>`

func TestCheckImage(t *testing.T) {
	pngImg := testImage(t, "png", 40, 20)
	jpg := testImage(t, "jpeg", 40, 20)
	for _, tc := range []struct {
		name string
		slot Slot
		data []byte
		// code is the refusal, or "" with ext and the width.
		code  string
		ext   string
		width int
	}{
		{"png", LogoSlot, pngImg, "", "png", 40},
		{"jpeg", LogoSlot, jpg, "", "jpg", 40},
		{"gif", LogoSlot, testImage(t, "gif", 40, 20), "", "gif", 40},
		{"preview card", OGImageSlot, testImage(t, "png", 1200, 630), "", "png", 1200},
		{"preview at X's 2:1", OGImageSlot, testImage(t, "jpeg", 800, 400), "", "jpg", 800},
		{"preview too small", OGImageSlot, testImage(t, "png", 400, 210), RefusedShape, "", 0},
		{"square preview", OGImageSlot, testImage(t, "png", 800, 800), RefusedShape, "", 0},
		{"banner preview", OGImageSlot, testImage(t, "png", 1500, 500), RefusedShape, "", 0},
		{"webp", LogoSlot, testWebP(t), "", "webp", 0},
		{"ico favicon", FaviconSlot, testICO(t, 32), "", "ico", 32},
		{"png favicon", FaviconSlot, testImage(t, "png", 32, 32), "", "png", 32},
		{"ico as a logo", LogoSlot, testICO(t, 32), RefusedType, "", 0},
		{"too many bytes", LogoSlot, append(bytes.Clone(pngImg), make([]byte, LogoSlot.MaxBytes)...), RefusedTooLarge, "", 0},
		{"svg with a script", LogoSlot, []byte(svgWithScript), RefusedSVG, "", 0},
		{"svg without a prolog", LogoSlot, []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`), RefusedSVG, "", 0},
		{"html", LogoSlot, []byte("<!DOCTYPE html><html><script>alert(1)</script></html>"), RefusedType, "", 0},
		{"text", LogoSlot, []byte("just some text"), RefusedType, "", 0},
		{"empty", LogoSlot, nil, RefusedType, "", 0},
		{"truncated png", LogoSlot, pngImg[:len(pngImg)-20], RefusedCorrupt, "", 0},
		{"truncated jpeg", LogoSlot, jpg[:len(jpg)/2], RefusedCorrupt, "", 0},
		{"truncated ico", FaviconSlot, testICO(t, 32)[:60], RefusedCorrupt, "", 0},
		{"gif header then garbage", LogoSlot, []byte("GIF89a\xff\xff\xff\xff\x00\x00\x00this is not a gif at all"), RefusedCorrupt, "", 0},
		{"gif with a garbage block", LogoSlot, gifThenGarbage(t), RefusedCorrupt, "", 0},
		{"gif without a trailer", LogoSlot, gifNoTrailer(t), "", "gif", 40},
		{"animated gif", LogoSlot, animatedGIF(t), "", "gif", 16},
		{"bomb", LogoSlot, pngClaiming(t, 100000, 100000), RefusedCanvas, "", 0},
		{"too wide", LogoSlot, pngClaiming(t, 5000, 1), RefusedCanvas, "", 0},
		{"big favicon", FaviconSlot, pngClaiming(t, 1024, 1024), RefusedCanvas, "", 0},
		{"ico holding a bomb", FaviconSlot, icoHolding(t, pngClaiming(t, 60000, 60000)), RefusedCanvas, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Check(tc.slot, tc.data)
			if tc.code != "" {
				ie, ok := err.(*RefusedError)
				if !ok || ie.Code != tc.code || ie.Field != tc.slot.Field {
					t.Fatalf("got %+v %v, want refusal %q", got, err, tc.code)
				}
				return
			}
			if err != nil || got.ext != tc.ext || (tc.width > 0 && got.width != tc.width) || got.height <= 0 {
				t.Fatalf("got %+v %v, want %s of width %d", got, err, tc.ext, tc.width)
			}
		})
	}
}

// TestCheckImageTruncatedGIF: a GIF cut inside its first frame is refused.
func TestCheckImageTruncatedGIF(t *testing.T) {
	g := testImage(t, "gif", 64, 64)
	if _, err := Check(LogoSlot, g[:len(g)-10]); err == nil {
		t.Fatal("a truncated GIF was accepted")
	}
}

func gifThenGarbage(t *testing.T) []byte {
	g := testImage(t, "gif", 40, 20)
	return append(g[:len(g)-1], []byte("garbage")...)
}

func gifNoTrailer(t *testing.T) []byte {
	g := testImage(t, "gif", 40, 20)
	return g[:len(g)-1]
}

func animatedGIF(t *testing.T) []byte {
	pal := color.Palette{color.Black, color.White}
	a := &gif.GIF{LoopCount: 0}
	for i := range 3 {
		img := image.NewPaletted(image.Rect(0, 0, 16, 16), pal)
		img.SetColorIndex(i, i, 1)
		a.Image, a.Delay = append(a.Image, img), append(a.Delay, 10)
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, a); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
