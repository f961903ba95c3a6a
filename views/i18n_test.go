package views

import (
	"testing"
)

// TestNamed: the language a request names, by quality; q=0 refuses one.
func TestNamed(t *testing.T) {
	tests := []struct {
		in        string
		want      string
		wantNamed bool
	}{
		{"", "en", false},
		{"fr-FR,de;q=0.5", "en", false},
		{"ko", "ko", true},
		{"en-US", "en", true},
		{"ko;q=0", "en", true},
		{"ko;q=0.0", "en", true},
		{"ko-KR;q=0,fr", "en", true},
		{"en;q=0", "ko", true},
		{"ko;q=0,en;q=0", "en", true},
		{"ko;q=0,en;q=0.1", "en", true},
		{"en;q=0,ko;q=0.1", "ko", true},
		{"ko;q=0.001", "ko", true},
		{"ko;q=0, ko-KR;q=0.5", "ko", true},
		{"fr;q=0", "en", false},
	}
	for _, tt := range tests {
		if got, named := Named(tt.in); got != tt.want || named != tt.wantNamed {
			t.Errorf("Named(%q) = %q, %v; want %q, %v", tt.in, got, named, tt.want, tt.wantNamed)
		}
	}
}

func TestNegotiate(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "en"},
		{"ko", "ko"},
		{"ko-KR,ko;q=0.9,en-US;q=0.8", "ko"},
		{"en-US,en;q=0.9,ko;q=0.8", "en"},
		{"fr-FR,ko;q=0.5", "ko"},
		{"de", "en"},
		{"ko;q=0.1,en;q=0.2", "en"},
		{"ko;q=abc", "en"},
		{"ko;q=2", "en"},
		{"KO-kr", "ko"},
	}
	for _, tt := range tests {
		if got := Negotiate(tt.in); got != tt.want {
			t.Errorf("Negotiate(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		lang string
		in   int64
		want string
	}{
		{"en", 0, "0 s"},
		{"en", 59, "59 s"},
		{"en", 60, "1 min"},
		{"en", 125, "2 min 5 s"},
		{"ko", 125, "2분 5초"},
		{"en", -3, "0 s"},
	}
	for _, tt := range tests {
		if got := For(tt.lang).Duration(tt.in); got != tt.want {
			t.Errorf("Duration(%s, %d) = %q, want %q", tt.lang, tt.in, got, tt.want)
		}
	}
}

// TestScriptTextInBothLanguages: every text the page's script is given
// has words in Korean and English (the catalogue's own fields are
// TestTextCatalogues').
func TestScriptTextInBothLanguages(t *testing.T) {
	for _, lang := range []string{"en", "ko"} {
		for k, s := range For(lang).Script() {
			if s == "" {
				t.Errorf("%s: the script's text %q is empty", lang, k)
			}
		}
	}
}
