package console

import (
	"testing"
)

// TestAuditChangesWritePricesInTheirCurrency: a product's price, stored in
// minor units, reads in its currency on the audit page.
func TestAuditChangesWritePricesInTheirCurrency(t *testing.T) {
	tests := []struct {
		name, old, new, lang string
		wantOld, wantNew     string
	}{
		{"added, USD", ``, `{"name":"Cap","price":1999,"currency":"USD","stock":5}`, "en", "", "$19.99"},
		{"changed, KRW in Korean", `{"name":"Cap","price":129000,"currency":"KRW"}`, `{"name":"Cap","price":99000,"currency":"KRW"}`, "ko", "129,000원", "99,000원"},
		{"changed, JPY", `{"price":500,"currency":"JPY"}`, `{"price":450,"currency":"JPY"}`, "en", "¥500", "¥450"},
		{"currency changed too", `{"price":1000,"currency":"KRW"}`, `{"price":1250,"currency":"USD"}`, "en", "₩1,000", "$12.50"},
		{"deleted, EUR", `{"name":"Cap","price":450,"currency":"EUR"}`, ``, "en", "€4.50", ""},
		{"no currency: the number as stored", `{"price":100}`, `{"price":200}`, "en", "100", "200"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range auditChanges(tc.old, tc.new, tc.lang) {
				if c.Field == "price" {
					got = append(got, c.Old.Full, c.New.Full)
				}
			}
			if len(got) != 2 || got[0] != tc.wantOld || got[1] != tc.wantNew {
				t.Fatalf("price %q, want %q → %q", got, tc.wantOld, tc.wantNew)
			}
		})
	}
}
