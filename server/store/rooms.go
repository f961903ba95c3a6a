package store

import (
	"context"
	"encoding/json"
	"fmt"

	"waitingroom/server/room"
)

// RoomRecord is a room as the database records it: its settings, and
// whether its catalog is sold out (it has products and no stock left).
type RoomRecord struct {
	Name     string
	Settings room.Settings
	SoldOut  bool
}

// SaveRoom records room name's settings, replacing any earlier record.
func (db *DB) SaveRoom(ctx context.Context, name string, s room.Settings) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("store: encode room %s: %w", name, err)
	}
	_, err = db.ExecContext(ctx, db.Rebind(`INSERT INTO rooms (name, settings, updated_at) VALUES (?, ?, CURRENT_TIMESTAMP)
		ON CONFLICT (name) DO UPDATE SET settings = excluded.settings, updated_at = excluded.updated_at`), name, string(b))
	if err != nil {
		return fmt.Errorf("store: record room %s: %w", name, err)
	}
	return nil
}

// DeleteRoom removes room name's record; its products and orders stay.
func (db *DB) DeleteRoom(ctx context.Context, name string) error {
	if _, err := db.ExecContext(ctx, db.Rebind(`DELETE FROM rooms WHERE name = ?`), name); err != nil {
		return fmt.Errorf("store: delete room record %s: %w", name, err)
	}
	return nil
}

// Rooms returns every recorded room, sorted by name. A record that no
// longer decodes into valid settings is an error naming it.
func (db *DB) Rooms(ctx context.Context) ([]RoomRecord, error) {
	var rows []struct {
		Name     string `db:"name"`
		Settings string `db:"settings"`
		Products int64  `db:"products"`
		Stock    int64  `db:"stock"`
	}
	err := db.SelectContext(ctx, &rows, `SELECT r.name, r.settings,
		(SELECT COUNT(*) FROM products p WHERE p.room = r.name) AS products,
		(SELECT COALESCE(SUM(p.stock), 0) FROM products p WHERE p.room = r.name) AS stock
		FROM rooms r ORDER BY r.name`)
	if err != nil {
		return nil, fmt.Errorf("store: list rooms: %w", err)
	}
	out := make([]RoomRecord, 0, len(rows))
	for _, r := range rows {
		// Settings added after the record was written take their default.
		rec := RoomRecord{Name: r.Name, Settings: room.Defaults(r.Name), SoldOut: r.Products > 0 && r.Stock == 0}
		if err := json.Unmarshal([]byte(r.Settings), &rec.Settings); err != nil {
			return nil, fmt.Errorf("store: decode room %s: %w", r.Name, err)
		}
		if err := rec.Settings.Validate(); err != nil {
			return nil, fmt.Errorf("store: room %s: %w", r.Name, err)
		}
		out = append(out, rec)
	}
	return out, nil
}
