package web

import (
	"strconv"
	"testing"
)

func TestParseLastEventID(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"", 0}, {"0", 0}, {"17", 17}, {"000123", 123}, {"999999999999999999", 999999999999999999},
		{"1234567890123456789", 0}, {"-5", 0}, {"+5", 0}, {"5 ", 0}, {"1e3", 0}, {"١٢", 0},
	}
	for _, tt := range tests {
		if got := parseLastEventID(tt.in); got != tt.want {
			t.Errorf("parseLastEventID(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func FuzzParseLastEventID(f *testing.F) {
	for _, s := range []string{"", "1", "42", "18446744073709551616", "-1", "abc", "9999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := parseLastEventID(s)
		if got < 0 {
			t.Fatalf("negative id %d from %q", got, s)
		}
		if want, err := strconv.ParseInt(s, 10, 64); err == nil && len(s) <= 18 && s[0] != '+' && s[0] != '-' && got != want {
			t.Fatalf("parseLastEventID(%q) = %d, want %d", s, got, want)
		}
	})
}
