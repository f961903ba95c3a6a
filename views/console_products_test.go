package views

import (
	"reflect"
	"regexp"
	"testing"
)

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

// TestRoomsTextIsComplete: every text of the rooms pages exists in both
// languages, with the same placeholders and the same map keys.
func TestRoomsTextIsComplete(t *testing.T) {
	ko, en := reflect.ValueOf(RoomsTextFor("ko")), reflect.ValueOf(RoomsTextFor("en"))
	placeholders := regexp.MustCompile(`\{[a-z]+\}`)
	for i := range ko.NumField() {
		name := ko.Type().Field(i).Name
		switch k, e := ko.Field(i), en.Field(i); k.Kind() {
		case reflect.String:
			if k.String() == "" || e.String() == "" {
				t.Errorf("%s is missing in a language", name)
			}
			if pk, pe := placeholders.FindAllString(k.String(), -1), placeholders.FindAllString(e.String(), -1); !reflect.DeepEqual(pk, pe) {
				t.Errorf("%s: placeholders %v in Korean, %v in English", name, pk, pe)
			}
		case reflect.Map:
			if k.Len() == 0 || k.Len() != e.Len() {
				t.Errorf("%s: %d Korean, %d English entries", name, k.Len(), e.Len())
			}
			for _, key := range k.MapKeys() {
				if v := e.MapIndex(key); !v.IsValid() || v.String() == "" || k.MapIndex(key).String() == "" {
					t.Errorf("%s[%s] is missing in a language", name, key)
				}
			}
		}
	}
	if RoomsTextFor("fr").Lang != "en" {
		t.Error("an unknown language is not English")
	}
}
