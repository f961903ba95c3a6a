package web

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
)

// cjkFontPaths are where the default preview image looks for a font that
// draws Hangul when OG_FONT is not set: Debian's and Ubuntu's
// fonts-noto-cjk, Fedora's and Arch's Noto CJK, Nanum, and macOS.
func cjkFontPaths() []string {
	return []string{
		"/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc",
		"/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
		"/usr/share/fonts/google-noto-cjk/NotoSansCJK-Bold.ttc",
		"/usr/share/fonts/noto-cjk/NotoSansCJK-Bold.ttc",
		"/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
		"/usr/share/fonts/truetype/nanum/NanumGothicBold.ttf",
		"/usr/share/fonts/truetype/nanum/NanumGothic.ttf",
		"/System/Library/Fonts/AppleSDGothicNeo.ttc",
	}
}

// maxFontFile bounds the font file read for the preview images.
const maxFontFile = 64 << 20

// findFont returns the first of paths that is a regular file of a
// reasonable size, or "" when none is.
func findFont(paths []string) string {
	for _, p := range paths {
		if checkFontFile(p) == nil {
			return p
		}
	}
	return ""
}

func checkFontFile(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	case fi.Size() > maxFontFile:
		return fmt.Errorf("%s is larger than %d MiB", path, maxFontFile>>20)
	}
	return nil
}

// ogFont is the typeface of the default preview images. The file is opened
// on the first image drawn and read glyph by glyph (sfnt reads through
// io.ReaderAt), so that a server that draws none holds none of its
// megabytes. Without a file, or when it cannot be parsed, Go's own bold
// font draws, which has no Hangul.
type ogFont struct {
	path string // "" is Go's font
	log  *slog.Logger

	once sync.Once
	font *sfnt.Font
	used string // the font that draws: path, or "gobold" when it failed
}

func newOGFont(path string, log *slog.Logger) *ogFont { return &ogFont{path: path, log: log} }

// id names the typeface that draws the images, for their fingerprints:
// the file's path, or Go's font when there is none or it cannot be used
// (so it loads the font, once).
func (f *ogFont) id() string {
	f.get()
	return f.used
}

// get returns the parsed font, loading it on first use.
func (f *ogFont) get() *sfnt.Font {
	f.once.Do(func() {
		if f.path != "" {
			fnt, err := openFont(f.path)
			if err == nil {
				f.font, f.used = fnt, f.path
				return
			}
			f.log.Error("preview images: the font cannot be used; Go's font draws them, without Hangul", "path", f.path, "err", err)
		}
		f.font, _ = opentype.Parse(gobold.TTF) // embedded, known good
		f.used = "gobold"
	})
	return f.font
}

// openFont opens a .ttf, .otf or collection, and picks its Korean face
// when it has one (a CJK collection holds one per language).
func openFont(path string) (*sfnt.Font, error) {
	if err := checkFontFile(path); err != nil {
		return nil, err
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	c, err := opentype.ParseCollectionReaderAt(file)
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("parse font %s: %w", path, err)
	}
	var first *sfnt.Font
	for i := range min(c.NumFonts(), 64) {
		fnt, err := c.Font(i)
		if err != nil {
			continue
		}
		if first == nil {
			first = fnt
		}
		if name, err := fnt.Name(nil, sfnt.NameIDFamily); err == nil && strings.HasSuffix(name, " KR") {
			return fnt, nil // the file stays open: glyphs are read from it
		}
	}
	if first == nil {
		file.Close()
		return nil, errors.New("the font file holds no usable font")
	}
	return first, nil
}
