package order

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"waitingroom/server/store"
)

// fixture is one order written straight into the database, at a chosen
// time.
type fixture struct {
	id        string // public id
	room      string
	product   int64
	visitor   string
	quantity  int
	unitPrice int64 // -1: not kept (NULL)
	currency  string
	status    string
	utm       UTM
	at        time.Time
}

// insert writes f and returns its database id.
func (e *env) insert(t *testing.T, f fixture) int64 {
	t.Helper()
	if f.status == "" {
		f.status = StatusPlaced
	}
	if f.visitor == "" {
		f.visitor = "v-" + f.id
	}
	if f.quantity == 0 {
		f.quantity = 1
	}
	var price, cur any
	if f.unitPrice >= 0 {
		price, cur = f.unitPrice, f.currency
	}
	var id int64
	err := e.db.QueryRowx(e.db.Rebind(`INSERT INTO orders (room, product_id, visitor, quantity, entry_token_hash,
		utm_source, utm_medium, utm_campaign, utm_term, utm_content, gclid, fbclid, ttclid, public_id, unit_price, currency, status, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		f.room, f.product, f.visitor, f.quantity, TokenHash(f.id), null(f.utm.Source), null(f.utm.Medium),
		null(f.utm.Campaign), null(f.utm.Term), null(f.utm.Content), null(f.utm.Gclid), null(f.utm.Fbclid), null(f.utm.Ttclid),
		f.id, price, cur, f.status,
		e.svc.store.timeArg(f.at)).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// product adds a product to room and returns its id.
func (e *env) product(t *testing.T, room, name string, price int64, currency string, stock int64) int64 {
	t.Helper()
	var id int64
	err := e.db.QueryRowx(e.db.Rebind(`INSERT INTO products (room, name, price, currency, stock) VALUES (?, ?, ?, ?, ?) RETURNING id`),
		room, name, price, currency, stock).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func pid(n int) string { return fmt.Sprintf("order-%011d", n) } // a valid public id

func publicIDs(rows []OrderRow) []string {
	ids := []string{}
	for _, r := range rows {
		ids = append(ids, r.PublicID)
	}
	return ids
}

func TestListOrdersFilters(t *testing.T) {
	base := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil)
			ctx := context.Background()
			other := e.room + "-b"
			shoes := e.product(t, e.room, "운동화", 129000, "KRW", 10)
			hat := e.product(t, other, "Hat", 1250, "USD", 10)
			insta := UTM{Source: "instagram", Medium: "social", Campaign: "bf", Term: "shoes", Content: "story"}
			mail := UTM{Source: "newsletter", Medium: "email", Campaign: "bf"}
			e.insert(t, fixture{id: pid(1), room: e.room, product: shoes, quantity: 2, unitPrice: 129000, currency: "KRW", utm: insta, at: base})
			e.insert(t, fixture{id: pid(2), room: e.room, product: shoes, unitPrice: 129000, currency: "KRW", utm: mail, at: base.Add(time.Hour)})
			e.insert(t, fixture{id: pid(3), room: e.room, product: shoes, unitPrice: 129000, currency: "KRW", status: StatusCancelled, utm: insta, at: base.Add(2 * time.Hour)})
			e.insert(t, fixture{id: pid(4), room: other, product: hat, quantity: 3, unitPrice: 1250, currency: "USD", at: base.Add(3 * time.Hour)})
			e.insert(t, fixture{id: pid(5), room: e.room, product: shoes, unitPrice: -1, at: base.Add(4 * time.Hour)})

			for _, tt := range []struct {
				name string
				f    OrderFilter
				want []string
			}{
				{"all of a room, newest first", OrderFilter{Room: e.room}, []string{pid(5), pid(3), pid(2), pid(1)}},
				{"other room", OrderFilter{Room: other}, []string{pid(4)}},
				{"unknown room", OrderFilter{Room: "nobody-here"}, []string{}},
				{"from, inclusive", OrderFilter{Room: e.room, From: base.Add(time.Hour)}, []string{pid(5), pid(3), pid(2)}},
				{"to, exclusive", OrderFilter{Room: e.room, To: base.Add(time.Hour)}, []string{pid(1)}},
				{"between", OrderFilter{From: base.Add(30 * time.Minute), To: base.Add(3*time.Hour + time.Second)}, []string{pid(4), pid(3), pid(2)}},
				{"a time zone is the same instant", OrderFilter{Room: e.room, From: base.Add(time.Hour).In(time.FixedZone("KST", 9*3600))}, []string{pid(5), pid(3), pid(2)}},
				{"placed", OrderFilter{Room: e.room, Status: StatusPlaced}, []string{pid(5), pid(2), pid(1)}},
				{"cancelled", OrderFilter{Status: StatusCancelled}, []string{pid(3)}},
				{"source", OrderFilter{Source: "instagram"}, []string{pid(3), pid(1)}},
				{"medium", OrderFilter{Medium: "email"}, []string{pid(2)}},
				{"campaign", OrderFilter{Campaign: "bf"}, []string{pid(3), pid(2), pid(1)}},
				{"campaign and status", OrderFilter{Campaign: "bf", Status: StatusPlaced}, []string{pid(2), pid(1)}},
				{"source is exact", OrderFilter{Source: "insta"}, []string{}},
				{"a quote is data", OrderFilter{Source: "x' OR '1'='1"}, []string{}},
				{"limit", OrderFilter{Limit: 2}, []string{pid(5), pid(4)}},
			} {
				t.Run(tt.name, func(t *testing.T) {
					rows, err := e.svc.ListOrders(ctx, tt.f)
					if err != nil {
						t.Fatal(err)
					}
					if got := publicIDs(rows); !slices.Equal(got, tt.want) {
						t.Fatalf("got %v, want %v", got, tt.want)
					}
				})
			}

			rows, err := e.svc.ListOrders(ctx, OrderFilter{Room: e.room})
			if err != nil {
				t.Fatal(err)
			}
			got := rows[3]
			want := OrderRow{ID: got.ID, PublicID: pid(1), Room: e.room, ProductID: shoes, ProductName: "운동화", Quantity: 2,
				UnitPrice: 129000, Currency: "KRW", Status: StatusPlaced, Source: "instagram", Medium: "social", Campaign: "bf",
				Term: "shoes", Content: "story", CreatedAt: got.CreatedAt}
			if !reflect.DeepEqual(got, want) || got.Amount() != 258000 || !got.CreatedAt.Equal(base) {
				t.Fatalf("row %+v (amount %d), want %+v at %v", got, got.Amount(), want, base)
			}
			if old := rows[0]; old.UnitPrice != -1 || old.Amount() != -1 || old.Currency != "" {
				t.Fatalf("an order without a kept price: %+v", old)
			}

			// Keyset paging walks every order once.
			var walked []string
			f := OrderFilter{Limit: 2}
			for range 10 {
				page, err := e.svc.ListOrders(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) == 0 {
					break
				}
				walked = append(walked, publicIDs(page)...)
				f.AfterID = page[len(page)-1].ID
			}
			if want := []string{pid(5), pid(4), pid(3), pid(2), pid(1)}; !slices.Equal(walked, want) {
				t.Fatalf("paged %v, want %v", walked, want)
			}
		})
	}
}

func TestOrderFilterValidation(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		name  string
		f     OrderFilter
		field string
	}{
		{"empty", OrderFilter{}, ""},
		{"full", OrderFilter{Room: "bf-2026", From: now.Add(-time.Hour), To: now, Status: StatusCancelled,
			Source: "인스타", Medium: "social", Campaign: "bf", AfterID: 9, Limit: MaxListLimit}, ""},
		{"bad room", OrderFilter{Room: "Bad Room"}, "room"},
		{"long room", OrderFilter{Room: strings.Repeat("a", 65)}, "room"},
		{"to before from", OrderFilter{From: now, To: now.Add(-time.Second)}, "to"},
		{"to equals from", OrderFilter{From: now, To: now}, "to"},
		{"status", OrderFilter{Status: "shipped"}, "status"},
		{"long source", OrderFilter{Source: strings.Repeat("a", MaxUTMFilter+1)}, "utm_source"},
		{"control in medium", OrderFilter{Medium: "a\nb"}, "utm_medium"},
		{"invalid UTF-8 campaign", OrderFilter{Campaign: "a\xffb"}, "utm_campaign"},
		{"negative after", OrderFilter{AfterID: -1}, "after"},
		{"negative limit", OrderFilter{Limit: -1}, "limit"},
		{"huge limit", OrderFilter{Limit: MaxListLimit + 1}, "limit"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.f.Validate()
			var inv *InvalidFilterError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.field != "" && (!errors.As(err, &inv) || inv.Field != tt.field):
				t.Fatalf("error %v, want one naming %s", err, tt.field)
			}
		})
	}
}

func TestExportOrdersCSV(t *testing.T) {
	base := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil)
			ctx := context.Background()
			evil := e.product(t, e.room, `=HYPERLINK("http://x","운동화")`, 1250, "USD", 10)
			e.insert(t, fixture{id: pid(1), room: e.room, product: evil, quantity: 3, unitPrice: 1250, currency: "USD", at: base,
				utm: UTM{Source: "+cmd", Medium: "-1+2", Campaign: "@SUM(A1)", Term: "\tx", Content: "plain, \"quoted\"",
					Gclid: "Cj0KCQ_x-1", Fbclid: "=cmd", Ttclid: "E.C.P"}})
			e.insert(t, fixture{id: pid(2), room: e.room, product: evil, unitPrice: -1, at: base.Add(time.Second)})

			var b bytes.Buffer
			if err := e.svc.ExportOrders(ctx, OrderFilter{Room: e.room}, &b); err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 3 || !slices.Equal(recs[0], CSVHeader) {
				t.Fatalf("records %q", recs)
			}
			want := []string{pid(1), "2026-11-27T10:00:00Z", e.room, "placed", fmt.Sprint(evil), `'=HYPERLINK("http://x","운동화")`, "3",
				"12.50", "USD", "37.50", "'+cmd", "'-1+2", "'@SUM(A1)", "'\tx", `plain, "quoted"`,
				"Cj0KCQ_x-1", "'=cmd", "E.C.P"}
			if !slices.Equal(recs[2], want) {
				t.Fatalf("row\n%q, want\n%q", recs[2], want)
			}
			if r := recs[1]; r[0] != pid(2) || r[7] != "" || r[8] != "" || r[9] != "" {
				t.Fatalf("an order without a kept price: %q", r)
			}
			for _, line := range strings.Split(b.String(), "\n") {
				if strings.Contains(line, "visitor") || strings.Contains(line, "v-"+pid(1)) {
					t.Fatalf("the export names a visitor: %q", line)
				}
			}
			if err := e.svc.ExportOrders(ctx, OrderFilter{Status: "shipped"}, &b); err == nil {
				t.Fatal("an invalid filter was exported")
			}
		})
	}
}

// TestExportOrdersPages: an export longer than a page has every order
// once, newest first.
func TestExportOrdersPages(t *testing.T) {
	e := newEnv(t, store.SQLite, nil)
	p := e.product(t, e.room, "p", 1000, "KRW", 10)
	n := 2*csvPage + 7
	tx := e.db.MustBegin()
	for i := range n {
		tx.MustExec(`INSERT INTO orders (room, product_id, visitor, quantity, entry_token_hash, public_id, unit_price, currency)
			VALUES (?, ?, 'v', 1, ?, ?, 1000, 'KRW')`, e.room, p, TokenHash(pid(i)), pid(i))
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := e.svc.ExportOrders(context.Background(), OrderFilter{Room: e.room}, &b); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n+1 {
		t.Fatalf("%d records, want %d and a header", len(recs)-1, n)
	}
	for i, r := range recs[1:] {
		if r[0] != pid(n-1-i) {
			t.Fatalf("record %d is %s, want %s", i, r[0], pid(n-1-i))
		}
	}
}

func TestCSVCellAndDecimal(t *testing.T) {
	for in, want := range map[string]string{"": "", "a": "a", "=1": "'=1", "+1": "'+1", "-1": "'-1", "@a": "'@a",
		"\tA": "'\tA", "\rA": "'\rA", " =1": " =1", "운동화": "운동화", "1-2": "1-2"} {
		if got := CSVCell(in); got != want {
			t.Errorf("CSVCell(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tt := range []struct {
		amount int64
		code   string
		want   string
	}{
		{129000, "KRW", "129000"}, {1250, "USD", "12.50"}, {5, "EUR", "0.05"}, {0, "USD", "0.00"},
		{1234, "JPY", "1234"}, {1234, "BHD", "1.234"}, {7, "XXQ", "0.07"},
	} {
		if got := Decimal(tt.amount, tt.code); got != tt.want {
			t.Errorf("Decimal(%d, %s) = %q, want %q", tt.amount, tt.code, got, tt.want)
		}
	}
}

// TestCancelOrder: a cancel gives the stock back and reopens a sold-out
// room; a second cancel is refused and changes nothing.
func TestCancelOrder(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, 2)
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
			o, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !soldOut() || e.stock(t, e.prods[0]) != 0 {
				t.Fatal("the room did not sell out")
			}
			if _, err := e.svc.CancelOrder(ctx, "other-room", o.PublicID); !errors.Is(err, ErrOrderNotFound) {
				t.Fatalf("cancel from another room: %v", err)
			}
			for _, id := range []string{NewPublicID(), "short", "bad id with spaces!!"} {
				if _, err := e.svc.CancelOrder(ctx, e.room, id); !errors.Is(err, ErrOrderNotFound) {
					t.Fatalf("cancel of %q: %v", id, err)
				}
			}
			c, err := e.svc.CancelOrder(ctx, e.room, o.PublicID)
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != StatusCancelled || c.PublicID != o.PublicID || c.Quantity != 2 {
				t.Fatalf("cancelled %+v", c)
			}
			if got := e.stock(t, e.prods[0]); got != 2 {
				t.Fatalf("stock %d after the cancel, want 2", got)
			}
			if soldOut() {
				t.Fatal("the restock did not reopen the room")
			}
			if ps, _ := e.svc.Products(ctx, e.room); len(ps) != 1 || ps[0].Stock != 2 {
				t.Fatalf("the cached products missed the restock: %+v", ps)
			}
			if _, err := e.svc.CancelOrder(ctx, e.room, o.PublicID); !errors.Is(err, ErrAlreadyCancelled) {
				t.Fatalf("second cancel: %v, want ErrAlreadyCancelled", err)
			}
			if got := e.stock(t, e.prods[0]); got != 2 {
				t.Fatalf("stock %d after a second cancel, want 2", got)
			}
			rows, err := e.svc.ListOrders(ctx, OrderFilter{Room: e.room, Status: StatusCancelled})
			if err != nil || len(rows) != 1 || rows[0].PublicID != o.PublicID {
				t.Fatalf("cancelled orders: %+v %v", rows, err)
			}
		})
	}
}

// TestConcurrentCancelsRestockOnce: of many cancels at once, one wins.
func TestConcurrentCancelsRestockOnce(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 5)
	ctx := context.Background()
	vs, toks := e.buyers(t, 1)
	o, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 3})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() { _, err := e.svc.CancelOrder(ctx, e.room, o.PublicID); errs <- err }()
	}
	won := 0
	for range 8 {
		switch err := <-errs; {
		case err == nil:
			won++
		case !errors.Is(err, ErrAlreadyCancelled):
			t.Fatal(err)
		}
	}
	if won != 1 || e.stock(t, e.prods[0]) != 5 {
		t.Fatalf("%d cancels won, stock %d; want 1 and 5", won, e.stock(t, e.prods[0]))
	}
}

func TestCampaignSales(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil)
			ctx := context.Background()
			krw := e.product(t, e.room, "shoes", 1000, "KRW", 10)
			usd := e.product(t, e.room, "hat", 250, "USD", 10)
			bf := UTM{Source: "instagram", Medium: "social", Campaign: "bf", Term: "ignored"}
			at := time.Now()
			e.insert(t, fixture{id: pid(1), room: e.room, product: krw, visitor: "ann", quantity: 2, unitPrice: 1000, currency: "KRW", utm: bf, at: at})
			e.insert(t, fixture{id: pid(2), room: e.room, product: usd, visitor: "ann", quantity: 1, unitPrice: 250, currency: "USD", utm: bf, at: at})
			e.insert(t, fixture{id: pid(3), room: e.room, product: krw, visitor: "bob", quantity: 1, unitPrice: 900, currency: "KRW", utm: UTM{Source: "instagram", Medium: "social", Campaign: "bf", Content: "x"}, at: at})
			e.insert(t, fixture{id: pid(4), room: e.room, product: krw, visitor: "cid", quantity: 5, unitPrice: 1000, currency: "KRW", utm: bf, status: StatusCancelled, at: at})
			e.insert(t, fixture{id: pid(5), room: e.room, product: krw, visitor: "dan", quantity: 1, unitPrice: 1000, currency: "KRW", at: at})
			e.insert(t, fixture{id: pid(6), room: e.room, product: krw, visitor: "eve", quantity: 1, unitPrice: -1, at: at})
			e.insert(t, fixture{id: pid(7), room: e.room + "-x", product: krw, visitor: "fay", quantity: 1, unitPrice: 1000, currency: "KRW", utm: bf, at: at})
			e.insert(t, fixture{id: pid(8), room: e.room, product: krw, visitor: "gus", quantity: 4, unitPrice: 1000, currency: "KRW", utm: UTM{Source: "naver"}, status: StatusCancelled, at: at})

			got, err := e.svc.CampaignSales(ctx, e.room)
			if err != nil {
				t.Fatal(err)
			}
			want := []CampaignSale{
				{Source: "instagram", Medium: "social", Campaign: "bf", Orders: 3, Buyers: 2, Units: 4,
					Revenue: map[string]int64{"KRW": 2900, "USD": 250}},
				{Orders: 2, Buyers: 2, Units: 2, Revenue: map[string]int64{"KRW": 1000}},
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
			if none, err := e.svc.CampaignSales(ctx, "no-such-room"); err != nil || len(none) != 0 {
				t.Fatalf("a room without orders: %+v %v", none, err)
			}
		})
	}
}

func TestOrderRooms(t *testing.T) {
	e := newEnv(t, store.SQLite, nil)
	e.product(t, "b-room", "p", 1, "KRW", 1)
	p := e.product(t, "a-room", "p", 1, "KRW", 1)
	e.insert(t, fixture{id: pid(1), room: "c-room", product: p, unitPrice: 1, currency: "KRW", at: time.Now()})
	got, err := e.svc.OrderRooms(context.Background())
	if want := []string{"a-room", "b-room", "c-room"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("rooms %v %v, want %v", got, err, want)
	}
}
