package web

import (
	"context"
	"net/url"
	"strconv"
	"testing"
	"time"

	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/web/console"
)

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
