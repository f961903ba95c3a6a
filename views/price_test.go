package views

import (
	"testing"
)

func TestFormatPrice(t *testing.T) {
	tests := []struct {
		amount         int64
		currency, lang string
		want           string
	}{
		{129000, "KRW", "ko", "129,000원"},
		{129000, "KRW", "en", "₩129,000"},
		{129000, "", "ko", "129,000원"},
		{1250, "USD", "en", "$12.50"},
		{1250, "USD", "ko", "$12.50"},
		{450, "EUR", "en", "€4.50"},
		{5, "EUR", "en", "€0.05"},
		{123456789, "GBP", "en", "£1,234,567.89"},
		{1500, "JPY", "en", "¥1,500"},
		{1250, "CHF", "en", "CHF\u00a012.50"},
		{12345, "BHD", "en", "BHD\u00a012.345"},
		{1250, "ZZZ", "en", "ZZZ\u00a012.50"},
		{0, "KRW", "en", "₩0"},
	}
	for _, tt := range tests {
		if got := FormatPrice(tt.amount, tt.currency, tt.lang); got != tt.want {
			t.Errorf("FormatPrice(%d, %q, %s) = %q, want %q", tt.amount, tt.currency, tt.lang, got, tt.want)
		}
	}
}

func TestPriceInput(t *testing.T) {
	for _, tc := range []struct {
		amount int64
		code   string
		want   string
		scale  int
		known  bool
	}{
		{129000, "KRW", "129000", 0, true},
		{0, "KRW", "0", 0, true},
		{1250, "USD", "12.50", 2, true},
		{5, "USD", "0.05", 2, true},
		{0, "EUR", "0.00", 2, true},
		{1234, "KWD", "1.234", 3, true},
		{500, "JPY", "500", 0, true},
		{1250, "ZZZ", "12.50", 2, false}, // unknown: two decimals, refused by the console
		{1250, "usd", "12.50", 2, false},
	} {
		if got := PriceInput(tc.amount, tc.code); got != tc.want {
			t.Errorf("PriceInput(%d, %s) = %q, want %q", tc.amount, tc.code, got, tc.want)
		}
		if got := CurrencyScale(tc.code); got != tc.scale {
			t.Errorf("CurrencyScale(%s) = %d, want %d", tc.code, got, tc.scale)
		}
		if got := KnownCurrency(tc.code); got != tc.known {
			t.Errorf("KnownCurrency(%s) = %v, want %v", tc.code, got, tc.known)
		}
	}
}
