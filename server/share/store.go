package share

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"waitingroom/server/store"
)

// Store is the share_links table, the same SQL for PostgreSQL and SQLite.
type Store struct {
	db  *store.DB
	now func() time.Time

	// mu guards last, the creation time of the newest link this Store
	// made: each new link is strictly later, so that the list's newest
	// first holds for links made within one clock tick.
	mu   sync.Mutex
	last time.Time
}

// NewStore returns the Store of db, whose migrations have applied.
func NewStore(db *store.DB) *Store { return &Store{db: db, now: time.Now} }

// createdAt is a new link's creation time: now to the microsecond (what
// PostgreSQL keeps), after that of the Store's previous link.
func (s *Store) createdAt() time.Time {
	at := s.now().UTC().Truncate(time.Microsecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !at.After(s.last) {
		at = s.last.Add(time.Microsecond)
	}
	s.last = at
	return at
}

// linkColumns are the columns a Link is read from.
const linkColumns = `code, room, utm_source, utm_medium, utm_campaign, utm_content, utm_term, clicks, created_by, created_at`

// codeTries bounds the fresh codes Create draws when one is taken.
const codeTries = 5

// Create records a new link of l.Room with l's UTM values and CreatedBy
// under a fresh code, and returns it. It returns ErrTooMany when the room
// has MaxPerRoom links already.
func (s *Store) Create(ctx context.Context, l Link) (Link, error) {
	l.Clicks, l.CreatedAt = 0, s.createdAt()
	for range codeTries {
		l.Code = NewCode()
		created, err := s.insert(ctx, l)
		if err != nil {
			return Link{}, err
		}
		if created {
			return l, nil
		}
		if n, err := s.count(ctx, l.Room); err != nil {
			return Link{}, err
		} else if n >= MaxPerRoom {
			return Link{}, ErrTooMany
		}
		// The code was taken: draw another.
	}
	return Link{}, fmt.Errorf("share: create a link of %s: %d codes in a row were taken", l.Room, codeTries)
}

// insert writes l unless its room is full or its code taken, and reports
// whether it did. The cap's count and the insert are one transaction; on
// PostgreSQL, whose READ COMMITTED lets two of them count the same rows,
// it holds the room's advisory lock (SQLite runs one write at a time).
func (s *Store) insert(ctx context.Context, l Link) (bool, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("share: create a link of %s: %w", l.Room, err)
	}
	defer tx.Rollback()
	if s.db.Dialect == store.Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, roomLock, l.Room); err != nil {
			return false, fmt.Errorf("share: lock the links of %s: %w", l.Room, err)
		}
	}
	res, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO share_links
		(code, room, utm_source, utm_medium, utm_campaign, utm_content, utm_term, clicks, created_by, created_at)
		SELECT ?, ?, ?, ?, ?, ?, ?, 0, ?, ? WHERE (SELECT COUNT(*) FROM share_links WHERE room = ?) < ?
		ON CONFLICT (code) DO NOTHING`),
		l.Code, l.Room, l.Source, l.Medium, l.Campaign, l.Content, l.Term, l.CreatedBy, l.CreatedAt, l.Room, MaxPerRoom)
	if err != nil {
		return false, fmt.Errorf("share: create a link of %s: %w", l.Room, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("share: create a link of %s: %w", l.Room, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("share: create a link of %s: %w", l.Room, err)
	}
	return n == 1, nil
}

// roomLock is the first key of the PostgreSQL advisory lock that
// serialises the creation of one room's links (the second is the hash of
// the room's name): "shar" in ASCII.
const roomLock = 0x73686172

func (s *Store) count(ctx context.Context, room string) (int, error) {
	var n int
	if err := s.db.GetContext(ctx, &n, s.db.Rebind(`SELECT COUNT(*) FROM share_links WHERE room = ?`), room); err != nil {
		return 0, fmt.Errorf("share: count the links of %s: %w", room, err)
	}
	return n, nil
}

// List returns room's links, newest first.
func (s *Store) List(ctx context.Context, room string) ([]Link, error) {
	var ls []Link
	err := s.db.SelectContext(ctx, &ls, s.db.Rebind(`SELECT `+linkColumns+` FROM share_links WHERE room = ?
		ORDER BY created_at DESC, code`), room)
	if err != nil {
		return nil, fmt.Errorf("share: list the links of %s: %w", room, err)
	}
	return ls, nil
}

// Get returns the link of code, or ErrNotFound.
func (s *Store) Get(ctx context.Context, code string) (Link, error) {
	var l Link
	err := s.db.GetContext(ctx, &l, s.db.Rebind(`SELECT `+linkColumns+` FROM share_links WHERE code = ?`), code)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Link{}, ErrNotFound
	case err != nil:
		return Link{}, fmt.Errorf("share: get link %s: %w", code, err)
	}
	return l, nil
}

// Delete removes room's link of code and returns it, or ErrNotFound.
func (s *Store) Delete(ctx context.Context, room, code string) (Link, error) {
	var l Link
	err := s.db.GetContext(ctx, &l, s.db.Rebind(`DELETE FROM share_links WHERE room = ? AND code = ? RETURNING `+linkColumns), room, code)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Link{}, ErrNotFound
	case err != nil:
		return Link{}, fmt.Errorf("share: delete link %s: %w", code, err)
	}
	return l, nil
}

// AddClicks adds n clicks to the link of code, atomically (a link deleted
// meanwhile takes none).
func (s *Store) AddClicks(ctx context.Context, code string, n int64) error {
	if _, err := s.db.ExecContext(ctx, s.db.Rebind(`UPDATE share_links SET clicks = clicks + ? WHERE code = ?`), n, code); err != nil {
		return fmt.Errorf("share: count clicks of %s: %w", code, err)
	}
	return nil
}
