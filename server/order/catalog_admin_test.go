package order

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"waitingroom/server/store"
)

func ptr[T any](v T) *T { return &v }

func TestProductValidation(t *testing.T) {
	ok := Product{Name: "Sneakers", Price: 129000, Currency: "KRW", Stock: 10}
	tests := []struct {
		name  string
		set   func(*Product)
		field string // "" when valid
	}{
		{"valid", func(*Product) {}, ""},
		{"free and none left", func(p *Product) { p.Price, p.Stock = 0, 0 }, ""},
		{"unicode name", func(p *Product) { p.Name = "운동화 👟" }, ""},
		{"longest name", func(p *Product) { p.Name = strings.Repeat("가", MaxProductName) }, ""},
		{"empty name", func(p *Product) { p.Name = "" }, "name"},
		{"blank name", func(p *Product) { p.Name = "  \u3000" }, "name"},
		{"long name", func(p *Product) { p.Name = strings.Repeat("a", MaxProductName+1) }, "name"},
		{"invalid UTF-8", func(p *Product) { p.Name = "a\xffb" }, "name"},
		{"replacement character", func(p *Product) { p.Name = "a\ufffdb" }, "name"},
		{"newline", func(p *Product) { p.Name = "a\nb" }, "name"},
		{"NUL", func(p *Product) { p.Name = "a\x00b" }, "name"},
		{"bidi override", func(p *Product) { p.Name = "abc\u202egpj.exe" }, "name"},
		{"bidi isolate", func(p *Product) { p.Name = "a\u2067b" }, "name"},
		{"negative price", func(p *Product) { p.Price = -1 }, "price"},
		{"huge price", func(p *Product) { p.Price = MaxPrice + 1 }, "price"},
		{"lower-case currency", func(p *Product) { p.Currency = "krw" }, "currency"},
		{"long currency", func(p *Product) { p.Currency = "KRWX" }, "currency"},
		{"empty currency", func(p *Product) { p.Currency = "" }, "currency"},
		{"no currency (XXX)", func(p *Product) { p.Currency = "XXX" }, "currency"},
		{"gold (XAU)", func(p *Product) { p.Currency = "XAU" }, "currency"},
		{"SDR (XDR)", func(p *Product) { p.Currency = "XDR" }, "currency"},
		{"testing code (XTS)", func(p *Product) { p.Currency = "XTS" }, "currency"},
		{"USD", func(p *Product) { p.Currency = "USD" }, ""},
		{"JPY", func(p *Product) { p.Currency = "JPY" }, ""},
		{"negative stock", func(p *Product) { p.Stock = -1 }, "stock"},
		{"huge stock", func(p *Product) { p.Stock = MaxStock + 1 }, "stock"},
		{"https image", func(p *Product) { p.ImageURL = "https://cdn.example.com/a.png?w=200" }, ""},
		{"image on this site", func(p *Product) { p.ImageURL = "/static/shoe.png" }, ""},
		{"longest image URL", func(p *Product) { p.ImageURL = "/" + strings.Repeat("a", MaxImageURL-1) }, ""},
		{"long image URL", func(p *Product) { p.ImageURL = "/" + strings.Repeat("a", MaxImageURL) }, "imageURL"},
		{"http image", func(p *Product) { p.ImageURL = "http://example.com/a.png" }, "imageURL"},
		{"javascript image", func(p *Product) { p.ImageURL = "javascript:alert(1)" }, "imageURL"},
		{"data image", func(p *Product) { p.ImageURL = "data:image/png;base64,AAAA" }, "imageURL"},
		{"scheme-relative image", func(p *Product) { p.ImageURL = "//evil.example/a.png" }, "imageURL"},
		{"backslash image", func(p *Product) { p.ImageURL = "/\\evil.example/a.png" }, "imageURL"},
		{"relative image", func(p *Product) { p.ImageURL = "a.png" }, "imageURL"},
		{"image with user", func(p *Product) { p.ImageURL = "https://u:p@example.com/a.png" }, "imageURL"},
		{"image with space", func(p *Product) { p.ImageURL = "/a b.png" }, "imageURL"},
		{"image with newline", func(p *Product) { p.ImageURL = "/a\nb.png" }, "imageURL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ok
			tt.set(&p)
			err := p.Validate()
			var inv *InvalidProductError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.field != "" && (!errors.As(err, &inv) || inv.Field != tt.field):
				t.Fatalf("error %v, want one naming %s", err, tt.field)
			}
		})
	}
	if _, err := (ProductPatch{Price: ptr(int64(1))}).newProduct(); err == nil {
		t.Fatal("a product without a name was created")
	}
	if _, err := (ProductPatch{Name: ptr("x")}).newProduct(); err == nil {
		t.Fatal("a product without a price was created")
	}
	if p, err := (ProductPatch{Name: ptr("x"), Price: ptr(int64(5))}).newProduct(); err != nil || p.Currency != "KRW" || p.Stock != 0 {
		t.Fatalf("defaults: %+v %v", p, err)
	}
}

func TestProductCRUD(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil)
			ctx := context.Background()
			p, err := e.svc.CreateProduct(ctx, e.room, ProductPatch{Name: ptr("Sneakers"), Price: ptr(int64(129000)), Stock: ptr(int64(5))})
			if err != nil || p.ID == 0 || p.Currency != "KRW" || p.Stock != 5 {
				t.Fatalf("create: %+v %v", p, err)
			}
			if _, err := e.svc.CreateProduct(ctx, e.room, ProductPatch{Name: ptr("bad"), Price: ptr(int64(-5))}); err == nil {
				t.Fatal("a negative price was stored")
			}
			before, img, err := e.svc.ChangeProduct(ctx, e.room, p.ID, ProductPatch{ImageURL: ptr("/static/shoe.png")})
			if err != nil || before != p || img.ImageURL != "/static/shoe.png" || img.Name != p.Name {
				t.Fatalf("image: before %+v after %+v %v", before, img, err)
			}
			if ps, err := e.svc.AdminProducts(ctx, e.room); err != nil || len(ps) != 1 || ps[0] != img {
				t.Fatalf("image not stored: %+v %v", ps, err)
			}
			q, err := e.svc.UpdateProduct(ctx, e.room, p.ID, ProductPatch{Price: ptr(int64(99)), Currency: ptr("EUR")})
			if err != nil || q.Name != "Sneakers" || q.Price != 99 || q.Currency != "EUR" || q.Stock != 5 {
				t.Fatalf("partial update: %+v %v", q, err)
			}
			ps, err := e.svc.AdminProducts(ctx, e.room)
			if err != nil || len(ps) != 1 || ps[0] != q {
				t.Fatalf("list: %+v %v; want [%+v]", ps, err, q)
			}
			if pub, _ := e.svc.Products(ctx, e.room); len(pub) != 1 || pub[0].Currency != "EUR" {
				t.Fatalf("the public list lacks the currency: %+v", pub)
			}
			var inv *InvalidProductError
			if _, err := e.svc.UpdateProduct(ctx, e.room, p.ID, ProductPatch{Name: ptr("")}); !errors.As(err, &inv) {
				t.Fatalf("update to an empty name: %v", err)
			}
			// Another room cannot reach the product.
			for _, err := range []error{
				func() error {
					_, err := e.svc.UpdateProduct(ctx, "other-room", p.ID, ProductPatch{Stock: ptr(int64(1))})
					return err
				}(),
				e.svc.DeleteProduct(ctx, "other-room", p.ID),
				func() error { _, err := e.svc.UpdateProduct(ctx, e.room, 999999, ProductPatch{}); return err }(),
			} {
				if !errors.Is(err, ErrProductNotFound) {
					t.Fatalf("%v, want ErrProductNotFound", err)
				}
			}
			// An ordered product stays: orders are records.
			vs, toks := e.buyers(t, 1)
			if _, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 1}); err != nil {
				t.Fatal(err)
			}
			if err := e.svc.DeleteProduct(ctx, e.room, p.ID); !errors.Is(err, ErrProductHasOrders) {
				t.Fatalf("delete of an ordered product: %v, want ErrProductHasOrders", err)
			}
			spare, err := e.svc.CreateProduct(ctx, e.room, ProductPatch{Name: ptr("Socks"), Price: ptr(int64(1000))})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.svc.DeleteProduct(ctx, e.room, spare.ID); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if err := e.svc.DeleteProduct(ctx, e.room, spare.ID); !errors.Is(err, ErrProductNotFound) {
				t.Fatalf("second delete: %v", err)
			}
			if ps, _ := e.svc.AdminProducts(ctx, e.room); len(ps) != 1 || ps[0].ID != p.ID {
				t.Fatalf("after delete: %+v", ps)
			}
		})
	}
}

// TestRestockReopensASoldOutRoom: the room sells out, the operator raises
// the stock, and the room admits again; taking the stock to 0 closes it.
func TestRestockReopensASoldOutRoom(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, 1)
			ctx := context.Background()
			soldOut := func() bool {
				t.Helper()
				st, err := e.eng.Stats(ctx, e.room)
				if err != nil {
					t.Fatal(err)
				}
				return st.SoldOut
			}
			vs, toks := e.buyers(t, 1)
			if _, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 1}); err != nil {
				t.Fatal(err)
			}
			if !soldOut() {
				t.Fatal("the room did not sell out")
			}
			if _, err := e.svc.UpdateProduct(ctx, e.room, e.prods[0], ProductPatch{Name: ptr("renamed")}); err != nil || !soldOut() {
				t.Fatalf("a rename reopened the room (err %v)", err)
			}
			if _, err := e.svc.UpdateProduct(ctx, e.room, e.prods[0], ProductPatch{Stock: ptr(int64(3))}); err != nil {
				t.Fatal(err)
			}
			if soldOut() {
				t.Fatal("raising the stock did not reopen the room")
			}
			if _, err := e.svc.UpdateProduct(ctx, e.room, e.prods[0], ProductPatch{Stock: ptr(int64(0))}); err != nil || !soldOut() {
				t.Fatalf("taking the stock to 0 left the room open (err %v)", err)
			}
			more, err := e.svc.CreateProduct(ctx, e.room, ProductPatch{Name: ptr("more"), Price: ptr(int64(1)), Stock: ptr(int64(2))})
			if err != nil || soldOut() {
				t.Fatalf("a new product in stock left the room sold out (err %v)", err)
			}
			if err := e.svc.DeleteProduct(ctx, e.room, more.ID); err != nil || !soldOut() {
				t.Fatalf("deleting the last product in stock left the room open (err %v)", err)
			}
		})
	}
}

func TestSeedProduct(t *testing.T) {
	demo := Product{Name: "Demo sneakers", Price: 129000, Currency: "KRW", Stock: 1000}
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil)
			ctx := context.Background()
			var wg sync.WaitGroup
			var mu sync.Mutex
			seeded := 0
			for range 5 { // instances started together
				wg.Go(func() {
					ok, err := e.svc.SeedProduct(ctx, e.room, demo)
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					if ok {
						seeded++
					}
					mu.Unlock()
				})
			}
			wg.Wait()
			ps, _ := e.svc.AdminProducts(ctx, e.room)
			if seeded != 1 || len(ps) != 1 || ps[0].Name != demo.Name || ps[0].Stock != 1000 {
				t.Fatalf("seeded %d times, products %+v; want one", seeded, ps)
			}
			// An operator's catalog is never touched.
			if _, err := e.svc.UpdateProduct(ctx, e.room, ps[0].ID, ProductPatch{Stock: ptr(int64(3))}); err != nil {
				t.Fatal(err)
			}
			if ok, err := e.svc.SeedProduct(ctx, e.room, demo); ok || err != nil {
				t.Fatalf("seeded a room that has a product: %v %v", ok, err)
			}
			if ps, _ := e.svc.AdminProducts(ctx, e.room); len(ps) != 1 || ps[0].Stock != 3 {
				t.Fatalf("after a second seed: %+v", ps)
			}
		})
	}
}

// TestStockSoldOut: a room is sold out when it has products and none in
// stock; a room with no product is not.
func TestStockSoldOut(t *testing.T) {
	for _, tc := range []struct {
		st   Stock
		want bool
	}{
		{Stock{Products: 0, Units: 0}, false},
		{Stock{Products: 1, Units: 0}, true},
		{Stock{Products: 3, Units: 0}, true},
		{Stock{Products: 1, Units: 1}, false},
		{Stock{Products: 2, Units: 5}, false},
	} {
		if got := tc.st.SoldOut(); got != tc.want {
			t.Errorf("%+v: sold out %v, want %v", tc.st, got, tc.want)
		}
	}
}
