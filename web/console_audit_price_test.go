package web

import (
	"strconv"
	"strings"
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

// TestAuditPageShowsProductPrices: a product added and repriced through the
// admin API reads "$19.99 → $24.99" on the audit page.
func TestAuditPageShowsProductPrices(t *testing.T) {
	rc := newRoomsConsole(t)
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	r := rc.do(t, "POST", "/api/admin/rooms/"+rc.room+"/products", `{"name":"Cap","price":1999,"currency":"USD","stock":5}`, auth, nil)
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var p struct{ ID int64 }
	r.json(t, &p)
	if r := rc.do(t, "PUT", "/api/admin/rooms/"+rc.room+"/products/"+strconv.FormatInt(p.ID, 10), `{"price":2499}`, auth, nil); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	_, page := rc.get(t, "/admin/audit", "en")
	for _, s := range []string{"$19.99", "$24.99"} {
		if !strings.Contains(page, s) {
			t.Fatalf("audit page lacks %q: %s", s, page)
		}
	}
	if strings.Contains(page, ">2499<") || strings.Contains(page, ">1999<") || strings.Contains(page, `<span class="value old">USD</span>`) {
		t.Fatalf("audit page shows minor units: %s", page)
	}
}
