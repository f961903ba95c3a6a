package web

import (
	"strconv"
	"strings"
	"testing"
)

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
