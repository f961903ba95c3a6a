package web

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"waitingroom/server/order"
)

// TestProductCurrencyHintAndXCodes: the price hint names the edited
// product's currency (examples for KRW and USD on the add form), and codes
// starting with X are refused with a clear message, by the console and by
// the JSON API.
func TestProductCurrencyHintAndXCodes(t *testing.T) {
	rc := newRoomsConsole(t)
	ctx := context.Background()
	base := "/admin/rooms/" + rc.room + "/products"
	usd, err := rc.web.catalog.CreateProduct(ctx, rc.room, order.ProductPatch{Name: ptrTo("Cap"), Price: ptrTo(int64(1999)), Currency: ptrTo("USD"), Stock: ptrTo(int64(5))})
	if err != nil {
		t.Fatal(err)
	}
	hint := func(page string) string {
		i := strings.Index(page, `id="hint-price" class="hint">`)
		if i < 0 {
			t.Fatalf("no price hint: %s", page)
		}
		rest := page[i+len(`id="hint-price" class="hint">`):]
		return rest[:strings.Index(rest, "<")]
	}
	if _, page := rc.get(t, base+"/"+strconv.FormatInt(usd.ID, 10), "en"); hint(page) != "In USD, such as 129.50" {
		t.Fatalf("edit form hint %q", hint(page))
	}
	if _, page := rc.get(t, base, "en"); hint(page) != "In the currency&#39;s main unit, such as 12950 for KRW or 129.50 for USD" {
		t.Fatalf("add form hint %q", hint(page))
	}

	for _, code := range []string{"XXX", "XAU", "XDR", "XTS", "xts"} {
		for _, lang := range []string{"en", "ko"} {
			resp, body := rc.post(t, base, url.Values{"name": {"Gold"}, "price": {"10"}, "currency": {code}, "stock": {"1"}}, map[string]string{"Accept-Language": lang})
			want := map[string]string{"en": "Codes starting with X", "ko": "X로 시작하는 코드"}[lang]
			if resp.StatusCode != 422 || !strings.Contains(body, want) {
				t.Fatalf("console, %s in %s: %d, want 422 with %q: %.2000s", code, lang, resp.StatusCode, want, body)
			}
		}
		auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
		r := rc.do(t, "POST", "/api/admin/rooms/"+rc.room+"/products", `{"name":"Gold","price":10,"currency":"`+strings.ToUpper(code)+`","stock":1}`, auth, nil)
		if r.status != 400 || !strings.Contains(r.body, "codes starting with X") {
			t.Fatalf("API, %s: %d %s", code, r.status, r.body)
		}
	}
	if ps, _ := rc.web.catalog.AdminProducts(ctx, rc.room); len(ps) != 1 {
		t.Fatalf("%d products, want the one Cap", len(ps))
	}
}
