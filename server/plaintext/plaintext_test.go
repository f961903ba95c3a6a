package plaintext

import "testing"

func TestValid(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
		want bool
	}{
		{"empty", "", true},
		{"ascii", "Black Friday", true},
		{"korean", "블랙 프라이데이 세일", true},
		{"emoji", "sale 🔥", true},
		{"invalid bytes", "a\xffb", false},
		{"replacement character", "a\ufffdb", false},
		{"NUL", "a\x00b", false},
		{"tab", "a\tb", false},
		{"BEL", "a\ab", false},
		{"DEL", "a\x7fb", false},
		{"C1", "a\u0085b", false},
		{"right-to-left override", "a\u202eb", false},
		{"first strong isolate", "a\u2068b", false},
		{"arabic letter mark", "a\u061cb", false},
		{"left-to-right mark", "a\u200eb", false},
		{"line separator", "a\u2028b", false},
		{"paragraph separator", "a\u2029b", false},
	} {
		if got := Valid(tt.in); got != tt.want {
			t.Errorf("%s: Valid(%q) = %v, want %v", tt.name, tt.in, got, tt.want)
		}
	}
}
