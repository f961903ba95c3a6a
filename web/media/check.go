// Package media checks and keeps the uploaded images: the slots and
// their limits, the sniffing and decoding of an upload, and the store
// with its cache that serves them.
package media

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"strings"

	"golang.org/x/image/webp"
)

// Uploaded images are checked from their bytes, never from their name or
// the browser's Content-Type: the type is sniffed and then confirmed by
// the decoder, the dimensions are read from the header before anything is
// decoded (a decompression bomb is a small file that claims a huge
// canvas), and the whole image is then decoded so that a truncated or
// corrupt file is refused at upload rather than shown broken to buyers.

// Slot is what an upload is for, and its limits.
type Slot struct {
	// Field is the branding field and the form's file input.
	Field string
	// MaxBytes bounds the file.
	MaxBytes int
	// MaxSide and MaxPixels bound the canvas.
	MaxSide, MaxPixels int
	// ICO accepts Windows icons (the favicon).
	ICO bool
	// Preview asks for a link-preview card: at least 600×315 and about
	// 1.91:1 (1200×630 is the size previewers ask for), so that KakaoTalk,
	// Facebook, Slack and X show it large and uncropped.
	Preview bool
}

// The image slots. The logo is fetched by every buyer of a sale, so it
// is kept small (the page's budget is 25 KB; a logo of a few hundred
// pixels is tens of KB); the preview image is fetched by link previewers
// only and is drawn at 1200×630, which a photo-like JPEG fits in well
// under 2 MiB; a favicon is at most 256×256 per icon.
var (
	LogoSlot    = Slot{Field: "logo", MaxBytes: 512 << 10, MaxSide: 4096, MaxPixels: 8 << 20}
	OGImageSlot = Slot{Field: "ogImage", MaxBytes: 2 << 20, MaxSide: 4096, MaxPixels: 8 << 20, Preview: true}
	FaviconSlot = Slot{Field: "favicon", MaxBytes: 256 << 10, MaxSide: 512, MaxPixels: 512 * 512, ICO: true}
)

// Slots are the branding's slots in the form's order.
var Slots = []Slot{LogoSlot, OGImageSlot, FaviconSlot}

// ProductSlot is a product's picture, shown on the order form to the
// buyers admitted (not to the whole line): a photo-like JPEG of about
// 1000 pixels a side fits in 1 MiB.
var ProductSlot = Slot{Field: "imageURL", MaxBytes: 1 << 20, MaxSide: 4096, MaxPixels: 8 << 20}

// imageType is an accepted image type.
type imageType struct {
	ext    string
	config func([]byte) (image.Config, error)
	decode func([]byte) error
}

func reader[T any](f func(*bytes.Reader) (T, error)) func([]byte) (T, error) {
	return func(b []byte) (T, error) { return f(bytes.NewReader(b)) }
}

func decodes[T any](f func(*bytes.Reader) (T, error)) func([]byte) error {
	return func(b []byte) error { _, err := f(bytes.NewReader(b)); return err }
}

// imageTypes are the accepted types, by their sniffed Content-Type.
var imageTypes = map[string]imageType{
	"image/png": {"png", reader(func(r *bytes.Reader) (image.Config, error) { return png.DecodeConfig(r) }),
		decodes(func(r *bytes.Reader) (image.Image, error) { return png.Decode(r) })},
	"image/jpeg": {"jpg", reader(func(r *bytes.Reader) (image.Config, error) { return jpeg.DecodeConfig(r) }),
		decodes(func(r *bytes.Reader) (image.Image, error) { return jpeg.Decode(r) })},
	"image/gif": {"gif", reader(func(r *bytes.Reader) (image.Config, error) { return gif.DecodeConfig(r) }),
		// The first frame only: an animation of many large frames, each
		// kept, would be a bomb of its own.
		decodes(func(r *bytes.Reader) (image.Image, error) { return gif.Decode(r) })},
	"image/webp": {"webp", reader(func(r *bytes.Reader) (image.Config, error) { return webp.DecodeConfig(r) }),
		decodes(func(r *bytes.Reader) (image.Image, error) { return webp.Decode(r) })},
	"image/x-icon": {"ico", icoConfig, checkICO},
}

// RefusedError is a refused upload: why, as a code the form words in the
// operator's language.
type RefusedError struct {
	Field string
	// Code is one of the Refused* codes.
	Code string
}

func (e *RefusedError) Error() string { return e.Field + ": image refused: " + e.Code }

// The reasons an upload is refused.
const (
	RefusedTooLarge = "too_large" // over the slot's MaxBytes
	RefusedSVG      = "svg"       // SVG can carry scripts
	RefusedType     = "type"      // not an accepted type
	RefusedCanvas   = "canvas"    // dimensions over the caps
	RefusedCorrupt  = "corrupt"   // truncated or malformed
	RefusedShape    = "shape"     // a preview image too small or not about 1.91:1
	// RefusedNotKept: the image could not be stored (no store, or it
	// failed); the form says it is not on the server.
	RefusedNotKept = "not_kept"
)

// checkedImage is an accepted upload.
type checkedImage struct {
	contentType, ext string
	width, height    int
}

// Check checks data as an upload for slot.
func Check(slot Slot, data []byte) (checkedImage, error) {
	refuse := func(code string) (checkedImage, error) {
		return checkedImage{}, &RefusedError{Field: slot.Field, Code: code}
	}
	if len(data) > slot.MaxBytes {
		return refuse(RefusedTooLarge)
	}
	ct := http.DetectContentType(data)
	typ, ok := imageTypes[ct]
	switch {
	case !ok && looksLikeSVG(data):
		return refuse(RefusedSVG)
	case !ok, typ.ext == "ico" && !slot.ICO:
		return refuse(RefusedType)
	}
	cfg, err := typ.config(data)
	if err != nil {
		return refuse(RefusedCorrupt)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return refuse(RefusedCorrupt)
	}
	// A GIF's header is 13 bytes: garbage after "GIF89a" reads as a huge
	// canvas. Its blocks are walked (cheaply, nothing decoded) first, so
	// that a damaged file is called damaged, not too large.
	if typ.ext == "gif" && !gifBlocks(data) {
		return refuse(RefusedCorrupt)
	}
	if cfg.Width > slot.MaxSide || cfg.Height > slot.MaxSide || cfg.Width*cfg.Height > slot.MaxPixels {
		return refuse(RefusedCanvas)
	}
	if err := typ.decode(data); err != nil {
		return refuse(RefusedCorrupt)
	}
	if slot.Preview && !previewShape(cfg.Width, cfg.Height) {
		return refuse(RefusedShape)
	}
	return checkedImage{contentType: ct, ext: typ.ext, width: cfg.Width, height: cfg.Height}, nil
}

// previewShape reports whether a w×h image makes a link-preview card: at
// least 600×315, with a width 1.8 to 2.0 times its height (1200×630 is
// 1.905; X's large card crops to 2:1).
func previewShape(w, h int) bool {
	return w >= 600 && h >= 315 && 10*w >= 18*h && 10*w <= 20*h
}

// looksLikeSVG reports an SVG document (text that opens an <svg element),
// to be refused with its own reason.
func looksLikeSVG(data []byte) bool {
	head := strings.ToLower(string(data[:min(len(data), 1024)]))
	return strings.Contains(head, "<svg")
}

// icoEntry is one image of a Windows icon file.
type icoEntry struct {
	width, height int
	data          []byte
}

// icoEntries reads an ICO file's directory, checking that every image it
// lists lies inside the file.
func icoEntries(b []byte) ([]icoEntry, bool) {
	le := binary.LittleEndian
	if len(b) < 6 || le.Uint16(b[0:]) != 0 || le.Uint16(b[2:]) != 1 {
		return nil, false
	}
	n := int(le.Uint16(b[4:]))
	if n == 0 || n > 64 || len(b) < 6+16*n {
		return nil, false
	}
	out := make([]icoEntry, 0, n)
	for i := range n {
		e := b[6+16*i:]
		w, h := int(e[0]), int(e[1])
		if w == 0 {
			w = 256
		}
		if h == 0 {
			h = 256
		}
		size, off := uint64(le.Uint32(e[8:])), uint64(le.Uint32(e[12:]))
		if size < 40 || off < uint64(6+16*n) || off+size > uint64(len(b)) {
			return nil, false
		}
		data := b[off : off+size]
		if bytes.HasPrefix(data, pngSignature) {
			// An icon's PNG says its own size, which is the one decoded.
			c, err := png.DecodeConfig(bytes.NewReader(data))
			if err != nil {
				return nil, false
			}
			w, h = c.Width, c.Height
		}
		out = append(out, icoEntry{width: w, height: h, data: data})
	}
	return out, true
}

// icoConfig is the largest image of an ICO file.
func icoConfig(b []byte) (image.Config, error) {
	es, ok := icoEntries(b)
	if !ok {
		return image.Config{}, errBadICO
	}
	var c image.Config
	for _, e := range es {
		c.Width, c.Height = max(c.Width, e.width), max(c.Height, e.height)
	}
	return c, nil
}

// checkICO checks each image of an ICO file: a PNG that decodes, or a
// bitmap with a BITMAPINFOHEADER (or a later version of it).
func checkICO(b []byte) error {
	es, ok := icoEntries(b)
	if !ok {
		return errBadICO
	}
	for _, e := range es {
		if bytes.HasPrefix(e.data, pngSignature) {
			if _, err := png.Decode(bytes.NewReader(e.data)); err != nil {
				return err
			}
			continue
		}
		switch binary.LittleEndian.Uint32(e.data) {
		case 40, 52, 56, 108, 124:
		default:
			return errBadICO
		}
	}
	return nil
}

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

var errBadICO = &RefusedError{Field: "favicon", Code: RefusedCorrupt}

// gifBlocks reports whether data's blocks after the header are well
// formed, up to the trailer or the end of data after a whole image:
// extensions and images made of length-prefixed sub-blocks. Nothing is
// decompressed.
func gifBlocks(data []byte) bool {
	const header = 13 // "GIF89a", the logical screen descriptor
	if len(data) < header {
		return false
	}
	i := header + colourTable(data[10])
	images := 0
	subBlocks := func() bool {
		for i < len(data) {
			n := int(data[i])
			i += 1 + n
			if n == 0 {
				return i <= len(data)
			}
		}
		return false
	}
	for i < len(data) {
		switch data[i] {
		case 0x3b: // trailer
			return true
		case 0x21: // extension: label, sub-blocks
			i += 2
			if !subBlocks() {
				return false
			}
		case 0x2c: // image: descriptor, local colour table, LZW width, sub-blocks
			if i+11 > len(data) {
				return false
			}
			i += 10 + colourTable(data[i+9])
			if i >= len(data) || data[i] < 2 || data[i] > 8 {
				return false
			}
			i++
			if !subBlocks() {
				return false
			}
			images++
		default:
			return false
		}
	}
	return i == len(data) && images > 0
}

// colourTable is the size in bytes of the colour table that a GIF's
// packed descriptor byte p announces.
func colourTable(p byte) int {
	if p&0x80 == 0 {
		return 0
	}
	return 3 << ((p & 7) + 1)
}

// Ext is the file extension of an accepted image of contentType, or ""
// for a type not accepted.
func Ext(contentType string) string { return imageTypes[contentType].ext }
