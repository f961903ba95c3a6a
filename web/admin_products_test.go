package web

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/web/console"
	"waitingroom/web/response"
)

var adminAuth = map[string]string{"Authorization": "Bearer " + testAdminToken}

// TestProductAdminAPI drives the products API on PostgreSQL and on the
// embedded store: create, list, update, delete, and every refusal.
func TestProductAdminAPI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		h    func(t *testing.T) *harness
	}{
		{"postgres", func(t *testing.T) *harness { return newOrderHarness(t, 0, nil).harness }},
		{"embedded", func(t *testing.T) *harness { return newHarness(t, nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.h(t)
			base := "/api/admin/rooms/" + h.room + "/products"
			var before []order.Product
			h.do(t, "GET", base, "", adminAuth, nil).json(t, &before)
			initial := len(before)
			r := h.do(t, "POST", base, `{"name":"Socks 🧦","price":5000,"currency":"EUR","stock":3}`, adminAuth, nil)
			var p order.Product
			r.json(t, &p)
			if r.status != 201 || p.ID == 0 || p.Name != "Socks 🧦" || p.Currency != "EUR" || p.Stock != 3 ||
				r.header.Get("Location") != base+"/"+strconv.FormatInt(p.ID, 10) {
				t.Fatalf("create: %d %s %v", r.status, r.body, r.header)
			}
			item := base + "/" + strconv.FormatInt(p.ID, 10)
			steps := []struct {
				name, method, path, body string
				status                   int
				code                     string
			}{
				{"default currency", "POST", base, `{"name":"Cap","price":100}`, 201, ""},
				{"unknown field", "POST", base, `{"name":"x","price":1,"colour":"red"}`, 400, "bad_json"},
				{"trailing garbage", "POST", base, `{"name":"x","price":1} x`, 400, "bad_json"},
				{"trailing bracket", "POST", base, `{"name":"x","price":1}]`, 400, "bad_json"},
				{"two objects", "POST", base, `{"name":"x","price":1}{}`, 400, "bad_json"},
				{"invalid UTF-8", "POST", base, "{\"name\":\"a\xffb\",\"price\":1}", 400, "bad_json"},
				{"lone surrogate", "POST", base, `{"name":"a\ud800b","price":1}`, 400, "invalid_product"},
				{"control character", "POST", base, `{"name":"a\u0007b","price":1}`, 400, "invalid_product"},
				{"bidi override", "POST", base, `{"name":"abc\u202egpj","price":1}`, 400, "invalid_product"},
				{"long name", "POST", base, `{"name":"` + strings.Repeat("a", 201) + `","price":1}`, 400, "invalid_product"},
				{"no name", "POST", base, `{"price":1}`, 400, "invalid_product"},
				{"no price", "POST", base, `{"name":"x"}`, 400, "invalid_product"},
				{"negative price", "POST", base, `{"name":"x","price":-1}`, 400, "invalid_product"},
				{"fractional price", "POST", base, `{"name":"x","price":1.5}`, 400, "bad_json"},
				{"price beyond int64", "POST", base, `{"name":"x","price":99999999999999999999}`, 400, "bad_json"},
				{"huge price", "POST", base, `{"name":"x","price":10000000000000}`, 400, "invalid_product"},
				{"price as text", "POST", base, `{"name":"x","price":"1"}`, 400, "bad_json"},
				{"lower-case currency", "POST", base, `{"name":"x","price":1,"currency":"eur"}`, 400, "invalid_product"},
				{"negative stock", "POST", base, `{"name":"x","price":1,"stock":-1}`, 400, "invalid_product"},
				{"huge stock", "POST", base, `{"name":"x","price":1,"stock":2000000000}`, 400, "invalid_product"},
				{"empty body", "POST", base, ``, 400, "bad_json"},
				{"array", "POST", base, `[]`, 400, "bad_json"},
				{"update", "PUT", item, `{"price":4500,"stock":7}`, 200, ""},
				{"update refused", "PUT", item, `{"stock":-7}`, 400, "invalid_product"},
				{"update unknown field", "PUT", item, `{"stok":7}`, 400, "bad_json"},
				{"update unknown product", "PUT", base + "/999999999", `{"stock":1}`, 404, "product_not_found"},
				{"update bad id", "PUT", base + "/abc", `{"stock":1}`, 404, "product_not_found"},
				{"update negative id", "PUT", base + "/-1", `{"stock":1}`, 404, "product_not_found"},
				{"another room's product", "PUT", "/api/admin/rooms/other-room/products/" + strconv.FormatInt(p.ID, 10), `{"stock":1}`, 404, "product_not_found"},
				{"bad room", "GET", "/api/admin/rooms/Bad_Room/products", ``, 400, "bad_room"},
				{"a product for no room", "POST", "/api/admin/rooms/no-such-room-x/products", `{"name":"x","price":1}`, 404, "room_not_found"},
			}
			for _, st := range steps {
				r := h.do(t, st.method, st.path, st.body, adminAuth, nil)
				var e response.Error
				if st.code != "" {
					r.json(t, &e)
				}
				if r.status != st.status || e.Code != st.code {
					t.Errorf("%s: %d %s, want %d %s", st.name, r.status, r.body, st.status, st.code)
				}
			}
			var list []order.Product
			r = h.do(t, "GET", base, "", adminAuth, nil)
			r.json(t, &list)
			byName := map[string]order.Product{}
			for _, q := range list {
				byName[q.Name] = q
			}
			want := order.Product{ID: p.ID, Name: "Socks 🧦", Price: 4500, Currency: "EUR", Stock: 7}
			if r.status != 200 || byName["Socks 🧦"] != want || byName["Cap"].Currency != "KRW" || len(list) != initial+2 {
				t.Fatalf("list: %d %s", r.status, r.body)
			}
			if r := h.do(t, "DELETE", item, "", adminAuth, nil); r.status != 200 || !strings.Contains(r.body, `"deleted":true`) {
				t.Fatalf("delete: %d %s", r.status, r.body)
			}
			if r := h.do(t, "DELETE", item, "", adminAuth, nil); r.status != 404 {
				t.Fatalf("second delete: %d %s", r.status, r.body)
			}
			// Every route needs the admin token.
			for _, m := range []struct{ method, path string }{{"GET", base}, {"POST", base}, {"PUT", item}, {"DELETE", item}} {
				if r := h.do(t, m.method, m.path, `{}`, nil, nil); r.status != 401 {
					t.Errorf("%s %s without the token: %d", m.method, m.path, r.status)
				}
			}
		})
	}
}

// TestRestockThroughTheAPI: the room sells out; raising the stock through
// the admin API reopens it; a product with orders cannot be deleted.
func TestRestockThroughTheAPI(t *testing.T) {
	t.Parallel()
	h := newOrderHarness(t, 1, nil)
	c, tok := h.admitted(t)
	if r := h.do(t, "POST", "/api/rooms/"+h.room+"/orders", `{"quantity":1}`, map[string]string{"X-Entry-Token": tok}, c); r.status != 201 {
		t.Fatalf("order: %d %s", r.status, r.body)
	}
	ctx := context.Background()
	if st, _ := h.eng.Stats(ctx, h.room); !st.SoldOut {
		t.Fatal("the room did not sell out")
	}
	item := "/api/admin/rooms/" + h.room + "/products/" + strconv.FormatInt(h.product, 10)
	if r := h.do(t, "PUT", item, `{"stock":50}`, adminAuth, nil); r.status != 200 || !strings.Contains(r.body, `"stock":50`) {
		t.Fatalf("restock: %d %s", r.status, r.body)
	}
	if st, _ := h.eng.Stats(ctx, h.room); st.SoldOut {
		t.Fatal("raising the stock did not reopen the room")
	}
	r := h.do(t, "DELETE", item, "", adminAuth, nil)
	var e response.Error
	r.json(t, &e)
	if r.status != 409 || e.Code != "product_has_orders" {
		t.Fatalf("delete of an ordered product: %d %s", r.status, r.body)
	}
}

// catalogWriter writes a room's products through one of the two paths an
// operator has: the JSON admin API or the console's forms.
type catalogWriter struct {
	name   string
	create func(t *testing.T, rc *roomsConsole, name string, stock int64) int64
	stock  func(t *testing.T, rc *roomsConsole, id, stock int64)
	delete func(t *testing.T, rc *roomsConsole, id int64)
}

var catalogWriters = []catalogWriter{
	{
		name: "admin API",
		create: func(t *testing.T, rc *roomsConsole, name string, stock int64) int64 {
			r := rc.do(t, "POST", "/api/admin/rooms/"+rc.room+"/products",
				`{"name":"`+name+`","price":1000,"stock":`+strconv.FormatInt(stock, 10)+`}`, adminAuth, nil)
			var p order.Product
			r.json(t, &p)
			if r.status != 201 {
				t.Fatalf("create %s: %d %s", name, r.status, r.body)
			}
			return p.ID
		},
		stock: func(t *testing.T, rc *roomsConsole, id, stock int64) {
			r := rc.do(t, "PUT", "/api/admin/rooms/"+rc.room+"/products/"+strconv.FormatInt(id, 10),
				`{"stock":`+strconv.FormatInt(stock, 10)+`}`, adminAuth, nil)
			if r.status != 200 {
				t.Fatalf("update %d: %d %s", id, r.status, r.body)
			}
		},
		delete: func(t *testing.T, rc *roomsConsole, id int64) {
			if r := rc.do(t, "DELETE", "/api/admin/rooms/"+rc.room+"/products/"+strconv.FormatInt(id, 10), "", adminAuth, nil); r.status != 200 {
				t.Fatalf("delete %d: %d %s", id, r.status, r.body)
			}
		},
	},
	{
		name: "console",
		create: func(t *testing.T, rc *roomsConsole, name string, stock int64) int64 {
			base := "/admin/rooms/" + rc.room + "/products"
			resp, body := rc.post(t, base, url.Values{"name": {name}, "price": {"1000"}, "currency": {"KRW"},
				"stock": {strconv.FormatInt(stock, 10)}, "imageURL": {""}}, nil)
			if resp.StatusCode != 303 {
				t.Fatalf("add %s: %d %s", name, resp.StatusCode, body)
			}
			_, page := rc.get(t, base, "en")
			return productIDIn(t, page, name)
		},
		stock: func(t *testing.T, rc *roomsConsole, id, stock int64) {
			item := "/admin/rooms/" + rc.room + "/products/" + strconv.FormatInt(id, 10)
			ps, err := rc.web.catalog.AdminProducts(context.Background(), rc.room)
			if err != nil {
				t.Fatal(err)
			}
			f := url.Values{}
			for _, p := range ps {
				if p.ID == id {
					v := console.ProductValues(p)
					f = url.Values{"name": {v.Name}, "price": {v.Price}, "currency": {v.Currency}, "imageURL": {v.ImageURL}}
				}
			}
			f.Set("stock", strconv.FormatInt(stock, 10))
			if resp, body := rc.post(t, item, f, nil); resp.StatusCode != 303 {
				t.Fatalf("save %d: %d %s", id, resp.StatusCode, body)
			}
		},
		delete: func(t *testing.T, rc *roomsConsole, id int64) {
			item := "/admin/rooms/" + rc.room + "/products/" + strconv.FormatInt(id, 10)
			if resp, body := rc.post(t, item, url.Values{"op": {"delete"}}, nil); resp.StatusCode != 303 {
				t.Fatalf("delete %d: %d %s", id, resp.StatusCode, body)
			}
		},
	},
}

// TestEveryCatalogWriteDecidesSoldOut: every write of a room's products,
// through the admin API and through the console, decides from the catalog
// whether the room is sold out (every product at stock 0), and a sold-out
// room admits nobody. A room with no product is not sold out.
func TestEveryCatalogWriteDecidesSoldOut(t *testing.T) {
	t.Parallel()
	for _, w := range catalogWriters {
		t.Run(w.name, func(t *testing.T) {
			rc := newRoomsConsole(t)
			ctx := context.Background()
			visitor := rc.do(t, "POST", "/api/rooms/"+rc.room+"/queue", "", nil, nil).cookie()
			var shoes, socks int64
			for i, st := range []struct {
				name    string
				write   func()
				soldOut bool
			}{
				{"create with stock 0", func() { shoes = w.create(t, rc, "Shoes", 0) }, true},
				{"update stock 0 to 5", func() { w.stock(t, rc, shoes, 5) }, false},
				{"create another with stock 0", func() { socks = w.create(t, rc, "Socks", 0) }, false},
				{"update stock 5 to 0", func() { w.stock(t, rc, shoes, 0) }, true},
				{"restock", func() { w.stock(t, rc, socks, 2) }, false},
				{"delete the last in stock", func() { w.delete(t, rc, socks) }, true},
				{"restock again", func() { w.stock(t, rc, shoes, 1) }, false},
				{"sell out again", func() { w.stock(t, rc, shoes, 0) }, true},
				{"delete the last product", func() { w.delete(t, rc, shoes) }, false},
			} {
				st.write()
				s, err := rc.eng.Stats(ctx, rc.room)
				if err != nil {
					t.Fatal(err)
				}
				if s.SoldOut != st.soldOut {
					t.Fatalf("%s: soldOut %v, want %v", st.name, s.SoldOut, st.soldOut)
				}
				if i > 1 {
					continue
				}
				// A sold-out room admits nobody: the visitor stays waiting
				// through ticks that let them in once it is open again.
				for range 3 {
					if _, err := rc.eng.Admit(ctx, rc.room, time.Second, []string{freshToken(t)}); err != nil {
						t.Fatal(err)
					}
				}
				var p queue.Position
				rc.do(t, "GET", "/api/rooms/"+rc.room+"/queue/position", "", nil, visitor).json(t, &p)
				if ready := p.Status == queue.StatusReady && p.EntryToken != nil; ready == st.soldOut {
					t.Fatalf("%s: %+v, want admitted %v", st.name, p, !st.soldOut)
				}
			}
		})
	}
}
