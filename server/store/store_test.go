package store

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"waitingroom/server/servicetest"
)

func TestOpenAndMigrate(t *testing.T) {
	tests := []struct {
		name     string
		url      func(t *testing.T) string
		dialect  string
		embedded bool
		wantErr  string
	}{
		{"embedded", func(*testing.T) string { return "" }, SQLite, true, ""},
		{"postgres", func(t *testing.T) string { return servicetest.PostgresURL(t) }, Postgres, false, ""},
		{"not postgres", func(*testing.T) string { return "mysql://x/y" }, "", false, "postgres://"},
		{"garbage", func(*testing.T) string { return "::" }, "", false, "postgres://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs strings.Builder
			db, err := Open(context.Background(), tt.url(t), 2, slog.New(slog.NewTextHandler(&logs, nil)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if db.Dialect != tt.dialect || db.Embedded != tt.embedded {
				t.Fatalf("dialect %s embedded %v", db.Dialect, db.Embedded)
			}
			if tt.embedded && !strings.Contains(logs.String(), "EMBEDDED") {
				t.Fatalf("the embedded store was not logged loudly: %s", logs.String())
			}
			for range 2 { // migrating twice is a no-op
				if err := db.Migrate(context.Background(), os.DirFS("../../migrations")); err != nil {
					t.Fatal(err)
				}
			}
			// Production mode: the migrations seed no product.
			var n int
			if err := db.Get(&n, `SELECT COUNT(*) FROM products`); err != nil || n != 0 {
				t.Fatalf("the migrations seeded %d products (%v); want none", n, err)
			}
			var id int64
			if err := db.QueryRowx(db.Rebind(`INSERT INTO products (room, name, price, stock) VALUES (?, 'x', 1, 1) RETURNING id`), "r").Scan(&id); err != nil {
				t.Fatal(err)
			}
			var currency string
			if err := db.Get(&currency, db.Rebind(`SELECT currency FROM products WHERE id = ?`), id); err != nil || currency != "KRW" {
				t.Fatalf("default currency %q (%v), want KRW", currency, err)
			}
			// The schema refuses a negative stock and a malformed currency.
			for _, q := range []string{`UPDATE products SET stock = -1 WHERE id = ?`, `UPDATE products SET currency = 'krw' WHERE id = ?`, `UPDATE products SET currency = 'EURO' WHERE id = ?`} {
				if _, err := db.Exec(db.Rebind(q), id); err == nil {
					t.Fatalf("the schema accepted %s", q)
				}
			}
		})
	}
}

// TestEmbeddedStoresAreApart: two embedded stores in one process have
// tables of their own: what one holds the other does not see, and each
// migrates on its own.
func TestEmbeddedStoresAreApart(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var dbs [2]*DB
	for i := range dbs {
		db, err := Open(context.Background(), "", 1, quiet)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Migrate(context.Background(), os.DirFS("../../migrations")); err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
		dbs[i] = db
	}
	if _, err := dbs[0].Exec(`INSERT INTO products (room, name, price, stock) VALUES ('r', 'x', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := dbs[1].Get(&n, `SELECT COUNT(*) FROM products`); err != nil || n != 0 {
		t.Fatalf("the second store sees %d products (%v); want none", n, err)
	}
}
