package console

import (
	"testing"
)

func TestParsePrice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in    string
		scale int
		want  int64
		ok    bool
	}{
		{"129000", 0, 129000, true},
		{"129,000", 0, 129000, true},
		{" 0 ", 0, 0, true},
		{"129000.5", 0, 0, false},
		{"12.50", 2, 1250, true},
		{"12.5", 2, 1250, true},
		{"12", 2, 1200, true},
		{".5", 2, 50, true},
		{"0.01", 2, 1, true},
		{"12.505", 2, 0, false},
		{"1.234", 3, 1234, true},
		{"-1", 2, 0, false},
		{"+1", 2, 0, false},
		{"1e3", 0, 0, false},
		{"", 2, 0, false},
		{".", 2, 0, false},
		{"1.2.3", 2, 0, false},
		{"NaN", 2, 0, false},
		{"１２", 0, 0, false}, // full-width digits
		{"10000000000", 2, 1000000000000, true},
		{"10000000000.01", 2, 0, false}, // beyond order.MaxPrice
		{"99999999999999999999", 0, 0, false},
	} {
		got, ok := parsePrice(tc.in, tc.scale)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parsePrice(%q, %d) = %d, %v; want %d, %v", tc.in, tc.scale, got, ok, tc.want, tc.ok)
		}
	}
}
