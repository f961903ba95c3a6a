// Package storetest opens a freshly migrated order database for tests:
// a schema of its own on the test PostgreSQL, or the embedded SQLite
// emptied first.
package storetest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"waitingroom/server/servicetest"
	"waitingroom/server/store"
)

// Migrated returns a freshly migrated database of dialect (store.Postgres
// or store.SQLite), closed when t ends. A missing PostgreSQL skips t, or
// fails it in CI.
func Migrated(t testing.TB, dialect string) *store.DB {
	t.Helper()
	url := ""
	if dialect == store.Postgres {
		url = servicetest.PostgresURL(t)
	}
	db, err := store.Open(context.Background(), url, 4, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if dialect == store.SQLite {
		// One in-memory database per process: start from nothing.
		var tables []string
		if err := db.Select(&tables, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`); err != nil {
			t.Fatal(err)
		}
		db.Exec("PRAGMA foreign_keys = OFF")
		for _, tbl := range tables {
			if _, err := db.Exec(`DROP TABLE IF EXISTS "` + tbl + `"`); err != nil {
				t.Fatal(err)
			}
		}
		db.Exec("PRAGMA foreign_keys = ON")
	}
	if err := db.Migrate(context.Background(), os.DirFS(migrationsDir())); err != nil {
		t.Fatal(err)
	}
	return db
}

// migrationsDir is the module's migrations/ folder: beside the go.mod
// above the test's working directory (its package's folder), so that it
// is found in a build with or without -trimpath.
func migrationsDir() string {
	dir, err := os.Getwd()
	if err != nil {
		return "migrations"
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "migrations")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "migrations"
		}
		dir = parent
	}
}
