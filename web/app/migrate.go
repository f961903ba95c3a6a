package app

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"time"

	"waitingroom/server/config"
	"waitingroom/server/store"
)

// migrations holds the SQL migrations at its root.
func (a Assets) migrations() fs.FS {
	sub, err := fs.Sub(a.Migrations, "migrations")
	if err != nil {
		panic("embedded migrations: " + err.Error()) // a build defect
	}
	return sub
}

// migrateCommand applies the embedded migrations to DATABASE_URL and exits.
func migrateCommand(ctx context.Context, assets Assets, args []string, getenv func(string) string, stdout io.Writer, log *slog.Logger) error {
	cfg, err := config.Parse(args, getenv, stdout)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if cfg.DatabaseURL == "" {
		return fmt.Errorf("migrate: DATABASE_URL is empty (the embedded store migrates itself at startup)")
	}
	db, err := store.Open(ctx, cfg.DatabaseURL, 2, log)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx, assets.migrations()); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}

// migrateUntilDone applies the migrations at startup, retrying every few
// seconds while the database is unreachable.
func migrateUntilDone(ctx context.Context, db *store.DB, migrations fs.FS, log *slog.Logger) {
	for wait := time.Second; ; wait = min(2*wait, 15*time.Second) {
		err := db.Migrate(ctx, migrations)
		if err == nil {
			log.Info("order database migrated", "dialect", db.Dialect)
			return
		}
		log.Error("order database not ready; orders answer 503 until it is", "err", err, "retryIn", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
