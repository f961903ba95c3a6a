package web

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"waitingroom/web/media"

	"waitingroom/server/store"
	"waitingroom/views"
)

// slowImages is an image store whose reads take a while and are counted:
// the reads made, the most at once, and the ones under way.
type slowImages struct {
	media.Images
	known   store.Image
	delay   time.Duration
	reads   atomic.Int64
	now     atomic.Int64
	highest atomic.Int64
}

func (s *slowImages) Image(ctx context.Context, sumHex string) (store.Image, error) {
	s.reads.Add(1)
	n := s.now.Add(1)
	defer s.now.Add(-1)
	for {
		h := s.highest.Load()
		if n <= h || s.highest.CompareAndSwap(h, n) {
			break
		}
	}
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return store.Image{}, ctx.Err()
	}
	if sumHex == s.known.SHA256 {
		return s.known, nil
	}
	return store.Image{}, store.ErrNoImage
}

// TestMediaReadsBounded: a burst for one image is one store read; a flood
// of made-up names never has more than media.Lookups reads under way, and
// those that find no slot are answered 503 with Retry-After in the
// visitor's language; a name found missing is not read again for a while.
func TestMediaReadsBounded(t *testing.T) {
	t.Parallel()
	logo := store.Image{SHA256: strings.Repeat("ab", 32), ContentType: "image/png", Data: []byte("png")}
	name := func(i int) string { return fmt.Sprintf("%064x", i+1) }
	tests := []struct {
		name      string
		requests  int
		path      func(i int) string
		delay     time.Duration
		maxReads  int64 // store reads in all
		maxAtOnce int64
		want503   bool // some requests answered 503
	}{
		{"burst on one logo", 1000, func(int) string { return "/media/" + logo.SHA256 + ".png" }, 50 * time.Millisecond, 1, 1, false},
		{"made-up names", 300, func(i int) string { return "/media/" + name(i) + ".png" }, time.Second, 300, media.Lookups, true},
		{"one missing name, again and again", 300, func(int) string { return "/media/" + name(0) + ".png" }, 10 * time.Millisecond, 1, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			imgs := &slowImages{known: logo, delay: tt.delay}
			h := newHarness(t, func(o *Options) { o.Images = imgs })
			var wg sync.WaitGroup
			var busy, other atomic.Int64
			statuses := make(chan string, tt.requests)
			for i := range tt.requests {
				wg.Go(func() {
					req, _ := http.NewRequest("GET", h.srv.URL+tt.path(i), nil)
					req.Header.Set("Accept-Language", "ko")
					resp, err := h.srv.Client().Do(req)
					if err != nil {
						statuses <- err.Error()
						return
					}
					var b strings.Builder
					copyBody(&b, resp)
					switch resp.StatusCode {
					case 200, 404:
					case 503:
						busy.Add(1)
						if resp.Header.Get("Retry-After") == "" || !strings.Contains(b.String(), views.For("ko").TroublePage) {
							statuses <- "503 without Retry-After or Korean text"
						}
					default:
						other.Add(1)
						statuses <- resp.Status
					}
				})
			}
			wg.Wait()
			close(statuses)
			for s := range statuses {
				t.Fatal(s)
			}
			if r := imgs.reads.Load(); r > tt.maxReads {
				t.Errorf("%d store reads, want at most %d", r, tt.maxReads)
			}
			if m := imgs.highest.Load(); m > tt.maxAtOnce {
				t.Errorf("%d store reads at once, want at most %d", m, tt.maxAtOnce)
			}
			if got := busy.Load() > 0; got != tt.want503 {
				t.Errorf("%d answered 503, want some: %v", busy.Load(), tt.want503)
			}
		})
	}
}

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
