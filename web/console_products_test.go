package web

import (
	"context"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitingroom/server/audit"
	"waitingroom/server/order"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// productIDIn returns the id of the product named name on a products page.
func productIDIn(t *testing.T, page, name string) int64 {
	t.Helper()
	m := regexp.MustCompile(`<tr data-product="(\d+)"><th scope="row"><a href="[^"]+">` + regexp.QuoteMeta(name) + `<`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no product %q on the page: %s", name, page)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	return id
}

// TestConsoleProducts: add products with prices typed in the currency's
// major unit, refuse what does not parse or validate (keeping what was
// typed, nothing stored), edit one, restock a sold-out room (which
// reopens it, and the page says so), delete one.
func TestConsoleProducts(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	ctx := context.Background()
	base := "/admin/rooms/" + rc.room + "/products"
	count := func() int {
		ps, err := rc.web.catalog.AdminProducts(ctx, rc.room)
		if err != nil {
			t.Fatal(err)
		}
		return len(ps)
	}
	shoeImage := rc.web.assets.url("favicon.ico") // an image this server serves
	good := url.Values{"name": {"Sneakers 👟"}, "price": {"129,000"}, "currency": {"KRW"}, "stock": {"0"}, "imageURL": {shoeImage}}
	for _, tc := range []struct {
		name, lang string
		form       url.Values
		field, msg string
	}{
		{"no name", "en", with(good, "name", " "), "name", "1 to 200 characters"},
		{"price with decimals in KRW", "en", with(good, "price", "129000.50"), "price", "at most 0 decimals"},
		{"price with 3 decimals in USD", "en", with(good, "price", "12.505", "currency", "USD"), "price", "at most 2 decimals"},
		{"negative price", "ko", with(good, "price", "-5"), "price", "소수점 0자리"},
		{"huge price", "en", with(good, "price", "10000000000000"), "price", "at most 0 decimals"},
		{"bad currency", "en", with(good, "currency", "WON"), "currency", "ISO 4217"},
		{"short currency", "en", with(good, "currency", "KR"), "currency", "ISO 4217"},
		{"negative stock", "en", with(good, "stock", "-1"), "stock", "between 0 and 1000000000"},
		{"stock not a number", "en", with(good, "stock", "lots"), "stock", "whole number"},
		{"script image", "en", with(good, "imageURL", "javascript:alert(1)"), "imageURL", "https:// address"},
		{"http image", "ko", with(good, "imageURL", "http://cdn.example/a.png"), "imageURL", "https:// 주소"},
		{"scheme-relative image", "en", with(good, "imageURL", "//evil.example/a.png"), "imageURL", "https:// address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := count()
			resp, body := rc.post(t, base, tc.form, map[string]string{"Accept-Language": tc.lang})
			if resp.StatusCode != 422 || !strings.Contains(body, `id="err-`+tc.field+`"`) || !strings.Contains(body, tc.msg) {
				t.Fatalf("%d, want 422 with %q at %s: %s", resp.StatusCode, tc.msg, tc.field, body)
			}
			if tc.field != "name" && !strings.Contains(body, `value="Sneakers 👟"`) {
				t.Fatal("the typed name is not kept")
			}
			if count() != before {
				t.Fatal("a refused form stored a product")
			}
		})
	}

	rc.eng.SetSoldOut(ctx, rc.room, true)
	resp, _ := rc.post(t, base, good, nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != base+"?saved=added" {
		t.Fatalf("add (no stock, still sold out): %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = rc.post(t, base, url.Values{"name": {"Socks"}, "price": {"12.5"}, "currency": {"usd"}, "stock": {"3"}, "imageURL": {""}}, nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != base+"?saved=added&restocked=1" {
		t.Fatalf("add in stock to a sold-out room: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if st, _ := rc.eng.Stats(ctx, rc.room); st.SoldOut {
		t.Fatal("a product in stock did not reopen the room")
	}
	status, page := rc.get(t, base+"?saved=added&restocked=1", "en")
	for _, s := range []string{"Product added.", "open again", "₩129,000", "$12.50", `<img class="thumb" src="` + shoeImage + `" alt="Sneakers 👟" width="48" height="48"`,
		`<caption id="wr-products-caption" class="sr-only">`} {
		if status != 200 || !strings.Contains(page, s) {
			t.Fatalf("the products page lacks %q: %d %s", s, status, page)
		}
	}
	shoe, socks := productIDIn(t, page, "Sneakers 👟"), productIDIn(t, page, "Socks")
	ps, _ := rc.web.catalog.AdminProducts(ctx, rc.room)
	want := map[int64]order.Product{
		shoe:  {ID: shoe, Name: "Sneakers 👟", Price: 129000, Currency: "KRW", Stock: 0, ImageURL: shoeImage},
		socks: {ID: socks, Name: "Socks", Price: 1250, Currency: "USD", Stock: 3},
	}
	for _, p := range ps {
		if p != want[p.ID] {
			t.Fatalf("stored %+v, want %+v", p, want[p.ID])
		}
	}

	// Edit: the form shows the price in the major unit; a refusal keeps
	// what was typed and stores nothing; a restock reopens the room.
	item := base + "/" + strconv.FormatInt(socks, 10)
	if _, page := rc.get(t, item, "en"); !strings.Contains(page, `value="12.50"`) || !strings.Contains(page, `value="USD"`) || !strings.Contains(page, "In USD, such as 129.50") {
		t.Fatalf("edit form: %s", page)
	}
	edit := url.Values{"name": {"Socks"}, "price": {"9.99"}, "currency": {"USD"}, "stock": {"0"}, "imageURL": {"https://cdn.example/socks.png"}}
	if resp, body := rc.post(t, item, with(edit, "price", "9.999"), nil); resp.StatusCode != 422 || !strings.Contains(body, `value="9.999"`) {
		t.Fatalf("invalid edit: %d %s", resp.StatusCode, body)
	}
	resp, _ = rc.post(t, item, edit, nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != item+"?saved=1" {
		t.Fatalf("edit: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	rc.eng.SetSoldOut(ctx, rc.room, true) // the last sold, as the order path would
	if _, page := rc.get(t, item, "en"); !strings.Contains(page, "sold out now") {
		t.Fatalf("the page does not say the room is sold out: %s", page)
	}
	resp, _ = rc.post(t, item, with(edit, "stock", "10"), nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != item+"?saved=1&restocked=1" {
		t.Fatalf("restock: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if st, _ := rc.eng.Stats(ctx, rc.room); st.SoldOut {
		t.Fatal("restocking did not reopen the room")
	}
	if _, page := rc.get(t, item+"?saved=1&restocked=1", "ko"); !strings.Contains(page, "다시 열었습니다") || strings.Contains(page, "data-sold-out") {
		t.Fatalf("restocked page: %s", page)
	}
	ps, _ = rc.web.catalog.AdminProducts(ctx, rc.room)
	for _, p := range ps {
		if p.ID == socks && (p.Price != 999 || p.Stock != 10 || p.ImageURL != "https://cdn.example/socks.png") {
			t.Fatalf("edited %+v", p)
		}
	}

	// Delete; another room's product and unknown ids are not found.
	other := servicetest.RoomName(t, rc.rdb)
	rc.eng.SaveRoom(ctx, other, room.Defaults(other))
	for _, p := range []string{"/admin/rooms/" + other + "/products/" + strconv.FormatInt(shoe, 10), base + "/999999999", base + "/abc", base + "/-1"} {
		if status, _ := rc.get(t, p, "en"); status != 404 {
			t.Errorf("GET %s: %d, want 404", p, status)
		}
		if resp, _ := rc.post(t, p, url.Values{"op": {"delete"}}, nil); resp.StatusCode != 404 {
			t.Errorf("delete %s: %d, want 404", p, resp.StatusCode)
		}
	}
	resp, _ = rc.post(t, base+"/"+strconv.FormatInt(shoe, 10), url.Values{"op": {"delete"}}, nil)
	if resp.StatusCode != 303 || resp.Header.Get("Location") != base+"?saved=deleted" || count() != 1 {
		t.Fatalf("delete: %d %s, %d left", resp.StatusCode, resp.Header.Get("Location"), count())
	}
	if status, _ := rc.get(t, "/admin/rooms/no-such-room-x/products", "en"); status != 404 {
		t.Fatalf("products of no room: %d", status)
	}
	if resp, _ := rc.post(t, "/admin/rooms/no-such-room-x/products", good, nil); resp.StatusCode != 404 {
		t.Fatalf("a product for no room: %d", resp.StatusCode)
	}
}

// TestConsoleProductWithOrdersStays: a product with orders cannot be
// deleted from the console either; the page says to set its stock to 0.
func TestConsoleProductWithOrdersStays(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	ctx := context.Background()
	p, err := rc.web.catalog.CreateProduct(ctx, rc.room, order.ProductPatch{Name: ptrTo("Cap"), Price: ptrTo(int64(100)), Stock: ptrTo(int64(5))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.db.Exec(`INSERT INTO orders (public_id, room, product_id, visitor, quantity, entry_token_hash, unit_price, currency) VALUES ('x-order', $1, $2, 'v', 1, 'h', 100, 'KRW')`, rc.room, p.ID); err != nil {
		t.Fatal(err)
	}
	resp, body := rc.post(t, "/admin/rooms/"+rc.room+"/products/"+strconv.FormatInt(p.ID, 10), url.Values{"op": {"delete"}}, nil)
	if resp.StatusCode != 409 || !strings.Contains(body, "set its stock to 0") {
		t.Fatalf("delete of an ordered product: %d %s", resp.StatusCode, body)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestConsoleFormsRefuseForgeries: every console form refuses a missing
// or wrong CSRF token and a cross-site post (403), and changes nothing.
func TestConsoleFormsRefuseForgeries(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	ctx := context.Background()
	p, err := rc.web.catalog.CreateProduct(ctx, rc.room, order.ProductPatch{Name: ptrTo("Cap"), Price: ptrTo(int64(100)), Stock: ptrTo(int64(5))})
	if err != nil {
		t.Fatal(err)
	}
	set, _ := rc.eng.Room(ctx, rc.room)
	newName := servicetest.RoomName(t, rc.rdb)
	base := "/admin/rooms/" + rc.room
	item := base + "/products/" + strconv.FormatInt(p.ID, 10)
	forms := []struct {
		path string
		form url.Values
	}{
		{"/admin/rooms/new", with(roomFormOf(newName, room.Defaults(newName)))},
		{base + "/settings", with(roomFormOf(rc.room, set), "rate", "7", "title", "Forged")},
		{base + "/action", url.Values{"action": {"close"}, "confirm": {"1"}}},
		{base + "/action", url.Values{"action": {"pause"}}},
		{base + "/delete", url.Values{"confirm": {rc.room}}},
		{base + "/products", url.Values{"name": {"Forged"}, "price": {"1"}, "currency": {"KRW"}, "stock": {"1"}}},
		{item, url.Values{"name": {"Forged"}, "price": {"1"}, "currency": {"KRW"}, "stock": {"0"}}},
		{item, url.Values{"op": {"delete"}}},
	}
	attacks := []struct {
		name string
		csrf string // "-" leaves the field out
		hdr  map[string]string
	}{
		{"no csrf", "-", nil},
		{"wrong csrf", "forged-token", nil},
		{"empty csrf", "", nil},
		{"cross-site", rc.csrf, map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"cross-origin, old browser", rc.csrf, map[string]string{"Origin": "https://evil.example"}},
	}
	products := func() []order.Product {
		ps, _ := rc.web.catalog.AdminProducts(ctx, rc.room)
		return ps
	}
	beforeProducts := products()
	for _, f := range forms {
		for _, a := range attacks {
			g := with(f.form)
			if a.csrf != "-" {
				g.Set("csrf", a.csrf)
			}
			resp, body := postForm(t, rc.c, rc.srv.URL+f.path, g, a.hdr)
			if resp.StatusCode != 403 || !strings.Contains(body, "<html") {
				t.Errorf("%s %s: %d, want a 403 page", a.name, f.path, resp.StatusCode)
			}
		}
	}
	if got, err := rc.eng.Room(ctx, rc.room); err != nil || !reflect.DeepEqual(got, set) {
		t.Fatalf("forged forms changed the room: %+v %v", got, err)
	}
	if _, err := rc.eng.Room(ctx, newName); err == nil {
		t.Fatal("a forged form created a room")
	}
	if got := products(); !reflect.DeepEqual(got, beforeProducts) {
		t.Fatalf("forged forms changed the products: %+v", got)
	}
	if es := auditOf(t, rc.harness, rc.room); len(es) != 0 {
		t.Fatalf("forged forms were audited as changes: %+v", es)
	}
	// The same forms with the token go through (so the refusals above
	// were the token's and the site's doing).
	if resp, _ := rc.post(t, base+"/action", url.Values{"action": {"pause"}}, nil); resp.StatusCode != 303 {
		t.Fatalf("the real form: %d", resp.StatusCode)
	}
}

// TestConsoleAndAPIAuditAlike: the same changes made through the JSON
// admin API and through the console write the same audit entries, but for
// who made them.
func TestConsoleAndAPIAuditAlike(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	ctx := context.Background()
	apiRoom, consoleRoom := servicetest.RoomName(t, rc.rdb), servicetest.RoomName(t, rc.rdb)
	capImage := rc.web.assets.url("favicon.ico") // an image this server serves
	ids := regexp.MustCompile(`"id":\d+|product \d+`)
	norm := func(es []audit.Entry, actor string) []audit.Entry {
		t.Helper()
		var out []audit.Entry
		for _, e := range es {
			if strings.HasPrefix(e.Action, "sale.") {
				continue // the sale log's own entries, written in the background
			}
			if e.Actor != actor || e.At.IsZero() {
				t.Errorf("entry %+v: actor %q", e, actor)
			}
			e.ID, e.At, e.Actor, e.Room = 0, time.Time{}, "", ""
			e.Target = ids.ReplaceAllString(e.Target, "product N")
			e.New = ids.ReplaceAllString(e.New, `"id":N`)
			e.Old = ids.ReplaceAllString(e.Old, `"id":N`)
			out = append(out, e)
		}
		return out
	}
	product := func(name string) int64 {
		ps, _ := rc.web.catalog.AdminProducts(ctx, name)
		if len(ps) != 1 {
			t.Fatalf("products of %s: %+v", name, ps)
		}
		return ps[0].ID
	}

	// Through the API.
	api := "/api/admin/rooms/" + apiRoom
	for _, st := range []struct{ method, path, body string }{
		{"PUT", api, `{"title":"Drop"}`},
		{"PUT", api, `{"title":"Drop 2","rate":80}`},
		{"PUT", api, `{"paused":true}`},
		{"PUT", api, `{"paused":true}`}, // nothing changes: no entry
		{"POST", api + "/products", `{"name":"Cap","price":1250,"currency":"USD","stock":5,"imageURL":"` + capImage + `"}`},
		{"PUT", api + "/products/{id}", `{"stock":7}`},
		{"DELETE", api + "/products/{id}", ``},
		{"DELETE", api, ``},
	} {
		path := st.path
		if strings.Contains(path, "{id}") {
			path = strings.Replace(path, "{id}", strconv.FormatInt(product(apiRoom), 10), 1)
		}
		if r := rc.do(t, st.method, path, st.body, adminAuth, nil); r.status >= 300 {
			t.Fatalf("%s %s: %d %s", st.method, path, r.status, r.body)
		}
	}

	// Through the console.
	con := "/admin/rooms/" + consoleRoom
	created := with(roomFormOf(consoleRoom, room.Defaults(consoleRoom)), "title", "Drop")
	for _, st := range []struct {
		path string
		form url.Values
	}{
		{"/admin/rooms/new", created},
		{con + "/settings", with(created, "title", "Drop 2", "rate", "80")},
		{con + "/action", url.Values{"action": {"pause"}}},
		{con + "/action", url.Values{"action": {"pause"}}},
		{con + "/products", url.Values{"name": {"Cap"}, "price": {"12.50"}, "currency": {"USD"}, "stock": {"5"}, "imageURL": {capImage}}},
		{con + "/products/{id}", url.Values{"name": {"Cap"}, "price": {"12.50"}, "currency": {"USD"}, "stock": {"7"}, "imageURL": {capImage}}},
		{con + "/products/{id}", url.Values{"op": {"delete"}}},
		{con + "/delete", url.Values{"confirm": {consoleRoom}}},
	} {
		path := st.path
		if strings.Contains(path, "{id}") {
			path = strings.Replace(path, "{id}", strconv.FormatInt(product(consoleRoom), 10), 1)
		}
		if resp, body := rc.post(t, path, st.form, nil); resp.StatusCode != 303 {
			t.Fatalf("POST %s: %d %.300s", path, resp.StatusCode, body)
		}
	}

	fromAPI, fromConsole := norm(auditOf(t, rc.harness, apiRoom), apiActor), norm(auditOf(t, rc.harness, consoleRoom), "admin")
	var actions []string
	for _, e := range fromAPI {
		actions = append(actions, e.Action)
	}
	wantActions := []string{"room.create", "room.update", "room.pause", "product.create", "product.update", "product.delete", "room.delete"}
	if !reflect.DeepEqual(actions, wantActions) {
		t.Fatalf("API audit actions %q, want %q", actions, wantActions)
	}
	if !reflect.DeepEqual(fromAPI, fromConsole) {
		t.Fatalf("the audit entries differ:\nAPI     %+v\nconsole %+v", fromAPI, fromConsole)
	}
	// old → new, field by field.
	if u := fromAPI[1]; u.Old != `{"rate":50,"title":"Drop"}` || u.New != `{"rate":80,"title":"Drop 2"}` {
		t.Fatalf("update entry %+v", u)
	}
	if p := fromAPI[4]; p.Target != "product N" || p.Old != `{"stock":5}` || p.New != `{"stock":7}` {
		t.Fatalf("product update entry %+v", p)
	}
	if c := fromAPI[3]; !strings.Contains(c.New, `"imageURL":"`+capImage+`"`) || !strings.Contains(c.New, `"price":1250`) {
		t.Fatalf("product create entry %+v", c)
	}
}

// TestProductImageOnTheOrderForm: an image URL set through the admin API
// is shown on the buyer's order form, sized and named; an unsafe one is
// refused.
func TestProductImageOnTheOrderForm(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 5, nil)
	item := "/api/admin/rooms/" + h.room + "/products/" + strconv.FormatInt(h.product, 10)
	for _, bad := range []string{"javascript:alert(1)", "http://cdn.example/a.png", "//evil.example/a.png", "/a b.png", "/" + strings.Repeat("a", order.MaxImageURL)} {
		r := h.do(t, "PUT", item, `{"imageURL":`+strconv.Quote(bad)+`}`, adminAuth, nil)
		if r.status != 400 || !strings.Contains(r.body, "imageURL") {
			t.Errorf("image %.40q: %d %s", bad, r.status, r.body)
		}
	}
	r := h.do(t, "PUT", item, `{"imageURL":"https://cdn.example/shoe.png?w=128&h=128"}`, adminAuth, nil)
	if r.status != 200 || !strings.Contains(r.body, `"imageURL":"https://cdn.example/shoe.png?w=128\u0026h=128"`) {
		t.Fatalf("set image: %d %s", r.status, r.body)
	}
	// The write forgot the cached product list; the room page was not
	// loaded before.
	page := h.do(t, "GET", "/r/"+h.room, "", nil, nil)
	want := `<img class="product-img" src="https://cdn.example/shoe.png?w=128&amp;h=128" alt="Sneakers" width="64" height="64"`
	if page.status != 200 || !strings.Contains(page.body, want) {
		t.Fatalf("room page lacks %s: %s", want, page.body)
	}
	if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self' data: https:;") {
		t.Fatalf("CSP %q does not let the image load", csp)
	}
}

// TestProductCurrencyHintAndXCodes: the price hint names the edited
// product's currency (examples for KRW and USD on the add form), and codes
// starting with X are refused with a clear message, by the console and by
// the JSON API.
func TestProductCurrencyHintAndXCodes(t *testing.T) {
	t.Parallel()
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
