package store

import (
	"context"
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
			var n int
			if err := db.Get(&n, db.Rebind(`SELECT COUNT(*) FROM products WHERE room = ?`), "demo"); err != nil || n < 1 {
				t.Fatalf("demo product: %d %v", n, err)
			}
			// The schema refuses negative stock.
			if _, err := db.Exec(db.Rebind(`UPDATE products SET stock = -1 WHERE room = ?`), "demo"); err == nil {
				t.Fatal("the schema accepted a negative stock")
			}
		})
	}
}
