// Package audit keeps the log of who changed what, when: console and
// admin API changes, and the sale's own events, on PostgreSQL or the
// embedded SQLite.
package audit

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"waitingroom/server/store"
)

// Entry is one change.
type Entry struct {
	ID     int64
	At     time.Time
	Actor  string // an operator's name, "admin" (ADMIN_TOKEN) or "system"
	Room   string // "" when the change is of no room
	Action string // "room.update", "sale.sold_out", …
	Target string // what changed within the room: a product id, an order id, …
	Old    string // the value before, "" when none
	New    string // the value after, "" when none
}

// Filter selects entries: of Room ("" for all), with ids below Before (0
// for the newest), at most Limit (MaxLimit when 0 or more).
type Filter struct {
	Room   string
	Before int64
	Limit  int
}

// MaxLimit bounds one page of entries.
const MaxLimit = 500

// Field bounds: an entry is a log line, not a store of documents.
const (
	maxShort = 200
	maxValue = 16 << 10
)

// Log is the audit log in db.
type Log struct {
	db  *store.DB
	now func() time.Time
}

// New returns the Log of db, whose migrations have applied.
func New(db *store.DB) *Log { return &Log{db: db, now: time.Now} }

// Record appends e; its ID is assigned and At, when zero, is now.
func (l *Log) Record(ctx context.Context, e Entry) error {
	if e.At.IsZero() {
		e.At = l.now()
	}
	_, err := l.db.ExecContext(ctx, l.db.Rebind(
		`INSERT INTO audit_log (at, actor, room, action, target, old_value, new_value) VALUES (?, ?, ?, ?, ?, ?, ?)`),
		e.At.UTC(), clip(e.Actor, maxShort), clip(e.Room, maxShort), clip(e.Action, maxShort), clip(e.Target, maxShort),
		nullable(clip(e.Old, maxValue)), nullable(clip(e.New, maxValue)))
	if err != nil {
		return fmt.Errorf("audit: record %s: %w", e.Action, err)
	}
	return nil
}

// List returns the entries f selects, newest first.
func (l *Log) List(ctx context.Context, f Filter) ([]Entry, error) {
	if f.Limit <= 0 || f.Limit > MaxLimit {
		f.Limit = MaxLimit
	}
	q := `SELECT id, at, actor, room, action, target, old_value, new_value FROM audit_log WHERE 1 = 1`
	var args []any
	if f.Room != "" {
		q += ` AND room = ?`
		args = append(args, f.Room)
	}
	if f.Before > 0 {
		q += ` AND id < ?`
		args = append(args, f.Before)
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, f.Limit)
	rows, err := l.db.QueryContext(ctx, l.db.Rebind(q), args...)
	if err != nil {
		return nil, fmt.Errorf("audit: list: %w", err)
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		var e Entry
		var old, nw sql.NullString
		if err := rows.Scan(&e.ID, &e.At, &e.Actor, &e.Room, &e.Action, &e.Target, &old, &nw); err != nil {
			return nil, fmt.Errorf("audit: list: %w", err)
		}
		e.Old, e.New = old.String, nw.String
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: list: %w", err)
	}
	return out, nil
}

// Change is one field that differs, its values as compact JSON.
type Change struct {
	Field, Old, New string
}

// Changes lists the JSON fields of old and new (structs or maps that
// marshal to JSON objects) whose values differ, sorted by field name. A
// field only one side has is compared with "" on the other. Values that
// do not marshal to objects compare as a whole, under the field "".
func Changes(old, new any) []Change {
	o, oerr := fields(old)
	n, nerr := fields(new)
	if oerr != nil || nerr != nil {
		ob, nb := compact(old), compact(new)
		if ob == nb {
			return nil
		}
		return []Change{{Old: ob, New: nb}}
	}
	var out []Change
	keys := slices.Sorted(maps.Keys(o))
	for k := range n {
		if _, ok := o[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		ov, nv := o[k], n[k]
		if bytes.Equal(ov, nv) {
			continue
		}
		out = append(out, Change{Field: k, Old: string(ov), New: string(nv)})
	}
	return out
}

// fields marshals v and splits the object into its fields, each compacted.
func fields(v any) (map[string][]byte, error) {
	if v == nil {
		return map[string][]byte{}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(raw))
	for k, m := range raw {
		var buf bytes.Buffer
		if err := json.Compact(&buf, m); err != nil {
			return nil, err
		}
		out[k] = buf.Bytes()
	}
	return out, nil
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func nullable(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
