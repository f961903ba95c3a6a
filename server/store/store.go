// Package store opens the order database: PostgreSQL when DATABASE_URL is
// set, otherwise an embedded SQLite, both through sqlx, and applies the
// embedded migrations with goose.
package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the PostgreSQL driver
	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite" // the embedded SQL driver
)

// Dialects.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// DB is an open order database.
type DB struct {
	*sqlx.DB
	// Dialect is Postgres or SQLite.
	Dialect string
	// Embedded reports the in-process SQLite default.
	Embedded bool

	migrated atomic.Bool
}

// ErrNotMigrated reports a database whose migrations have not applied yet.
var ErrNotMigrated = errors.New("store: migrations not applied yet")

// Ready reports whether the database answers and its migrations have
// applied: until then, orders and room records would fail on missing
// tables, so the server is not ready.
func (db *DB) Ready(ctx context.Context) error {
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	if !db.migrated.Load() {
		return ErrNotMigrated
	}
	return nil
}

// DefaultMaxConns is the pool size, as in the seed (DB_MAX_CONNS).
const DefaultMaxConns = 40

// Open connects to rawURL (postgres://…), or opens an embedded in-memory
// SQLite when rawURL is empty, which is logged loudly. It does not wait for
// PostgreSQL to answer: the waiting room runs without its database, and
// orders answer 503 until it is back. It returns an error for a malformed
// URL.
func Open(ctx context.Context, rawURL string, maxConns int, log *slog.Logger) (*DB, error) {
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	if rawURL == "" {
		// One connection to an in-memory database of this store's own:
		// SQLite serialises writers anyway, and the data lives as long as
		// the store. Its name is unique, so that two stores in one process
		// never share their tables.
		var id [8]byte
		if _, err := rand.Read(id[:]); err != nil {
			return nil, fmt.Errorf("store: name embedded sqlite: %w", err)
		}
		db, err := sqlx.Open("sqlite", "file:waitingroom-"+hex.EncodeToString(id[:])+"?mode=memory&cache=shared&_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)")
		if err != nil {
			return nil, fmt.Errorf("store: open embedded sqlite: %w", err)
		}
		db.SetMaxOpenConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
		log.Warn("DATABASE_URL is empty: orders go to an EMBEDDED in-memory SQL store (SQLite). " +
			"They are lost on restart and not shared between instances. Set DATABASE_URL for anything but a demo.")
		return &DB{DB: db, Dialect: SQLite, Embedded: true}, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, errors.New("store: DATABASE_URL must be a postgres:// URL")
	}
	db, err := sqlx.Open("postgres", rawURL)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", u.Redacted(), err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	log.Info("order database", "url", u.Redacted(), "maxConns", maxConns)
	return &DB{DB: db, Dialect: Postgres}, nil
}

// Migrate applies the migrations under dir of the dialect in migrations
// (postgres/ or sqlite/). It returns an error naming the failing step.
func (db *DB) Migrate(ctx context.Context, migrations fs.FS) error {
	sub, err := fs.Sub(migrations, db.Dialect)
	if err != nil {
		return fmt.Errorf("store: migrations for %s: %w", db.Dialect, err)
	}
	dialect := goose.DialectPostgres
	if db.Dialect == SQLite {
		dialect = goose.DialectSQLite3
	}
	p, err := goose.NewProvider(dialect, db.DB.DB, sub)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	db.migrated.Store(true)
	return nil
}
