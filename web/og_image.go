package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strconv"
	"strings"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"waitingroom/server/room"
	"waitingroom/views"
)

// The default preview image's size: the one Open Graph consumers crop
// least (1.91:1).
const (
	ogWidth  = 1200
	ogHeight = 630
	// ogVersion changes every fingerprint when the drawing changes.
	ogVersion = "1"
)

// ogCard is what the default preview image shows: the texts are final
// (already formatted in the room's language), so that the image is a pure
// function of the card and the font.
type ogCard struct {
	Title  string
	Shop   string
	When   string // the opening time line, or ""
	Accent string // "#rrggbb"
}

// newOGCard returns the card of a room of face f, in language t, at now. The opening
// time is shown in Korean time (UTC+9) for a Korean page and in UTC for an
// English one: rooms have no zone of their own, and these are the zones
// their buyers read.
func newOGCard(name string, f roomFace, t views.Messages, now time.Time) ogCard {
	c := ogCard{Title: f.title, Shop: f.brand.ShopName, Accent: f.brand.AccentColor}
	if c.Title == "" {
		c.Title = name
	}
	if c.Accent == "" {
		c.Accent = room.Light.Default
	}
	if at := f.opensAt; at != nil {
		line := t.OGOpens
		if !now.Before(*at) {
			line = t.OGOpened
		}
		c.When = views.Fill(line, "time", formatOpening(*at, t.Lang))
	}
	return c
}

// koreanWeekdays are the weekdays' one-syllable Korean names, from Sunday.
const koreanWeekdays = "일월화수목금토"

// formatOpening formats an opening time as a preview says it: "2026년 12월
// 1일 (화) 20:00 KST" in Korean time, or "Tue 1 Dec 2026, 11:00 UTC".
func formatOpening(at time.Time, lang string) string {
	if lang == "ko" {
		k := at.In(time.FixedZone("KST", 9*60*60))
		wd := []rune(koreanWeekdays)[k.Weekday()]
		return fmt.Sprintf("%d년 %d월 %d일 (%c) %s KST", k.Year(), k.Month(), k.Day(), wd, k.Format("15:04"))
	}
	return at.UTC().Format("Mon 2 Jan 2006, 15:04 UTC")
}

// fingerprint names the image of c drawn with font fontID: it changes with
// anything drawn.
func (c ogCard) fingerprint(fontID string) string {
	h := sha256.New()
	for _, s := range []string{ogVersion, fontID, c.Title, c.Shop, c.When, c.Accent} {
		h.Write([]byte(strconv.Itoa(len(s))))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// The layout, in pixels.
const (
	ogBar       = 24  // the accent bar on the left
	ogMargin    = 96  // left and right margins, from the bar
	ogTitleSize = 72  // the title's font size
	ogTitleLine = 92  // the title's line height
	ogTitleMax  = 3   // title lines at most; the last one ends in "…"
	ogSmallSize = 36  // the shop's and the opening time's size
	ogShopY     = 128 // baselines
	ogTitleY    = 250
	ogWhenY     = 548
)

// drawOGImage draws card c with fnt and returns the PNG. The work is
// bounded by the card: titles are at most room.MaxTitleLen runes and at
// most ogTitleMax lines are measured and drawn.
func drawOGImage(c ogCard, f *ogFont) ([]byte, error) {
	title, err := opentypeFace(f, ogTitleSize)
	if err != nil {
		return nil, fmt.Errorf("og image: %w", err)
	}
	defer title.Close()
	small, err := opentypeFace(f, ogSmallSize)
	if err != nil {
		return nil, fmt.Errorf("og image: %w", err)
	}
	defer small.Close()

	img := image.NewRGBA(image.Rect(0, 0, ogWidth, ogHeight))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	accent := parseHex(c.Accent)
	draw.Draw(img, image.Rect(0, 0, ogBar, ogHeight), image.NewUniform(accent), image.Point{}, draw.Src)

	left := ogBar + ogMargin
	width := ogWidth - left - ogMargin
	text := func(fc font.Face, col color.Color, s string, y int) {
		d := font.Drawer{Dst: img, Src: image.NewUniform(col), Face: fc, Dot: fixed.P(left, y)}
		d.DrawString(s)
	}
	if c.Shop != "" {
		text(small, color.RGBA{0x5b, 0x62, 0x70, 0xff}, fitLine(small, c.Shop, width), ogShopY)
	}
	for i, line := range wrapText(title, c.Title, width, ogTitleMax) {
		text(title, color.RGBA{0x16, 0x18, 0x1d, 0xff}, line, ogTitleY+i*ogTitleLine)
	}
	if c.When != "" {
		text(small, accent, fitLine(small, c.When, width), ogWhenY)
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("og image: encode: %w", err)
	}
	return buf.Bytes(), nil
}

// opentypeFace returns a face of f at size pixels; each drawing has its
// own, as faces are not safe for concurrent use.
func opentypeFace(f *ogFont, size float64) (font.Face, error) {
	return opentype.NewFace(f.get(), &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
}

// parseHex reads "#rrggbb"; anything else is the default accent.
func parseHex(s string) color.RGBA {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	if len(s) != 7 || s[0] != '#' || err != nil {
		return parseHex(room.Light.Default)
	}
	return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xff}
}

func fits(fc font.Face, s string, width int) bool {
	return font.MeasureString(fc, s).Ceil() <= width
}

// longestFit returns the largest n for which r[:n] followed by suffix
// fits width (0 when none does), by binary search: a long word costs a few
// measurements, not one per rune.
func longestFit(fc font.Face, r []rune, suffix string, width int) int {
	lo, hi := 0, len(r)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(fc, string(r[:mid])+suffix, width) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// fitLine returns s, or its longest prefix that fits width followed by "…".
func fitLine(fc font.Face, s string, width int) string {
	if fits(fc, s, width) {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:longestFit(fc, r, "…", width)]), " ") + "…"
}

// wrapText breaks s into at most maxLines lines that fit width: at spaces,
// or inside a word too long for a line. The last line takes the rest, cut
// with "…" when it does not fit.
func wrapText(fc font.Face, s string, width, maxLines int) []string {
	words := strings.Fields(s)
	var lines []string
	for len(words) > 0 {
		if len(lines) == maxLines-1 {
			return append(lines, fitLine(fc, strings.Join(words, " "), width))
		}
		line := words[0]
		if !fits(fc, line, width) { // a word wider than a line: break it
			r := []rune(line)
			n := max(longestFit(fc, r, "", width), 1)
			lines = append(lines, string(r[:n]))
			words[0] = string(r[n:])
			continue
		}
		k := 1
		for k < len(words) && fits(fc, line+" "+words[k], width) {
			line += " " + words[k]
			k++
		}
		lines = append(lines, line)
		words = words[k:]
	}
	return lines
}
