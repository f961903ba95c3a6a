// Package plaintext decides whether text given by a visitor or an operator
// is plain: it stores cleanly and reads as it displays.
package plaintext

import (
	"unicode"
	"unicode/utf8"
)

// Valid reports whether s is valid UTF-8 (and holds no U+FFFD, which the
// JSON decoder puts in place of invalid bytes), without control characters
// (C0, DEL, C1), bidirectional formatting characters (U+061C, U+200E/F,
// U+202A–U+202E, U+2066–U+2069) or line and paragraph separators.
func Valid(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, c := range s {
		if c == utf8.RuneError || unicode.IsControl(c) || unicode.Is(unicode.Bidi_Control, c) ||
			unicode.In(c, unicode.Zl, unicode.Zp) {
			return false
		}
	}
	return true
}
