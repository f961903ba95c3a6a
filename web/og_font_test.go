package web

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestOGFontID: the preview images' fingerprint names the font that
// actually draws them: Go's font when the file is missing or not a font.
func TestOGFontID(t *testing.T) {
	t.Parallel()
	junk := filepath.Join(t.TempDir(), "junk.ttf")
	if err := os.WriteFile(junk, []byte("not a font"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path, want string
	}{
		{"no font file", "", "gobold"},
		{"a missing file", "/no/such/font.ttc", "gobold"},
		{"a file that is no font", junk, "gobold"},
	}
	if p := findFont(cjkFontPaths()); p != "" {
		tests = append(tests, struct{ name, path, want string }{"the system's CJK font", p, p})
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newOGFont(tt.path, log).id(); got != tt.want {
				t.Errorf("id() = %q, want %q", got, tt.want)
			}
		})
	}
}
