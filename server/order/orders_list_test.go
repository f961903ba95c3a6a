package order

import (
	"context"
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
