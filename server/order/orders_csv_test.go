package order

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"waitingroom/server/store"
)

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
