package access

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
)

// MaxBatch is the most codes one generation or upload may hold: ten
// INSERTs, well inside a request's time on either database.
const MaxBatch = 10_000

// Codes keeps rooms' access codes in the order database (PostgreSQL or
// the embedded SQLite), hashed.
type Codes struct {
	db   *sqlx.DB
	hash Hasher
	now  func() time.Time
}

// New returns the codes in db, hashed by h. now is the clock that decides
// expiry.
func New(db *sqlx.DB, h Hasher, now func() time.Time) *Codes {
	return &Codes{db: db, hash: h, now: now}
}

// Added is the outcome of Generate or Import.
type Added struct {
	// Codes are the generated codes, shown once (Generate only).
	Codes []string `json:"codes,omitempty"`
	// Added counts the codes written; Skipped the uploaded ones that the
	// room already had, or that were repeated in the upload.
	Added   int `json:"added"`
	Skipped int `json:"skipped"`
}

// Generate makes n new codes for room under spec, in one transaction.
func (c *Codes) Generate(ctx context.Context, room string, n int, spec Spec) (Added, error) {
	if n < 1 || n > MaxBatch {
		return Added{}, invalid("count", "count must be from 1 to %d, not %d", MaxBatch, n)
	}
	if err := spec.Validate(c.now()); err != nil {
		return Added{}, err
	}
	out := Added{Codes: make([]string, 0, n)}
	err := c.inTx(ctx, func(tx *sqlx.Tx) error {
		for len(out.Codes) < n {
			batch := make([]string, min(insertBatch, n-len(out.Codes)))
			norms := make([]string, len(batch))
			for i := range batch {
				batch[i] = Generate()
				norms[i], _ = Normalize(batch[i])
			}
			added, err := c.insert(ctx, tx, room, norms, spec)
			if err != nil {
				return err
			}
			// A code the room had (60 bits: never, in practice) is left
			// out; the loop draws another.
			for i, norm := range norms {
				if added[string(c.hash.Sum(norm))] {
					out.Codes = append(out.Codes, batch[i])
				}
			}
		}
		return nil
	})
	if err != nil {
		return Added{}, fmt.Errorf("access: generate %d codes for %s: %w", n, room, err)
	}
	out.Added = n
	return out, nil
}

// Import adds the given codes to room under spec, in one transaction. A
// code that is not MinLen to MaxLen letters, digits or '_' (once spaces
// and dashes are dropped) refuses the whole upload, naming its place; one
// the room already has, or that came before in the upload, is skipped.
func (c *Codes) Import(ctx context.Context, room string, codes []string, spec Spec) (Added, error) {
	if len(codes) < 1 || len(codes) > MaxBatch {
		return Added{}, invalid("count", "an upload holds from 1 to %d codes, not %d", MaxBatch, len(codes))
	}
	if err := spec.Validate(c.now()); err != nil {
		return Added{}, err
	}
	norms := make([]string, len(codes))
	for i, code := range codes {
		norm, ok := Normalize(code)
		if !ok {
			return Added{}, &InvalidError{Field: "code", Index: i + 1,
				Msg: fmt.Sprintf("code %d (%q) is not %d to %d letters, digits or '_', once spaces and dashes are dropped", i+1, clip(code), MinLen, MaxLen)}
		}
		norms[i] = norm
	}
	var out Added
	err := c.inTx(ctx, func(tx *sqlx.Tx) error {
		for lo := 0; lo < len(norms); lo += insertBatch {
			added, err := c.insert(ctx, tx, room, norms[lo:min(lo+insertBatch, len(norms))], spec)
			if err != nil {
				return err
			}
			out.Added += len(added)
		}
		return nil
	})
	if err != nil {
		return Added{}, fmt.Errorf("access: import %d codes for %s: %w", len(codes), room, err)
	}
	out.Skipped = len(codes) - out.Added
	return out, nil
}

// insertBatch is the number of codes one INSERT writes: 6 parameters a
// code, far below either database's limit on parameters.
const insertBatch = 1000

// insert adds normalized codes in one statement, and returns the hashes
// of those it added: a code the room has, or one repeated before it, is
// skipped.
func (c *Codes) insert(ctx context.Context, tx *sqlx.Tx, room string, norms []string, spec Spec) (map[string]bool, error) {
	var q strings.Builder
	q.WriteString(`INSERT INTO access_codes (room, line, code_hash, hint, uses, expires_at) VALUES `)
	args := make([]any, 0, 6*len(norms))
	expires := nullTime(spec.ExpiresAt)
	for i, norm := range norms {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?, ?, ?, ?)")
		args = append(args, room, spec.Line, c.hash.Sum(norm), hint(norm), spec.Uses, expires)
	}
	q.WriteString(` ON CONFLICT (room, code_hash) DO NOTHING RETURNING code_hash`)
	rows, err := tx.QueryContext(ctx, tx.Rebind(q.String()), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	added := make(map[string]bool, len(norms))
	for rows.Next() {
		var h []byte
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		added[string(h)] = true
	}
	return added, rows.Err()
}

// Grant is what a redeemed code gives its visitor.
type Grant struct {
	Line string
	// Again reports a visitor who had redeemed the code before: it used
	// no new use.
	Again bool
}

// Redeem uses code once for visitor in room, atomically: of concurrent
// redemptions of a code with k uses left, exactly k succeed. A visitor
// who redeemed the code before gets the same grant again (Again) without
// using it, even once the code has expired or is used up: their use was
// taken when it was good. The refusals are ErrUnknown (also for a malformed code),
// ErrWrongRoom, ErrExpired and ErrUsedUp.
func (c *Codes) Redeem(ctx context.Context, room, code, visitor string) (Grant, error) {
	norm, ok := Normalize(code)
	if !ok {
		return Grant{}, ErrUnknown
	}
	sum := c.hash.Sum(norm)
	var g Grant
	err := c.inTx(ctx, func(tx *sqlx.Tx) error {
		var row struct {
			ID        int64        `db:"id"`
			Line      string       `db:"line"`
			Uses      int          `db:"uses"`
			Used      int          `db:"used"`
			ExpiresAt sql.NullTime `db:"expires_at"`
		}
		err := tx.GetContext(ctx, &row, tx.Rebind(`SELECT id, line, uses, used, expires_at FROM access_codes WHERE room = ? AND code_hash = ?`), room, sum)
		if errors.Is(err, sql.ErrNoRows) {
			var other int
			if err := tx.GetContext(ctx, &other, tx.Rebind(`SELECT COUNT(*) FROM access_codes WHERE code_hash = ?`), sum); err != nil {
				return err
			}
			if other > 0 {
				return ErrWrongRoom
			}
			return ErrUnknown
		}
		if err != nil {
			return err
		}
		g.Line = row.Line
		res, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO access_redemptions (code_id, visitor, redeemed_at) VALUES (?, ?, ?)
			ON CONFLICT (code_id, visitor) DO NOTHING`), row.ID, visitor, c.now().UTC())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			g.Again = err == nil
			return err
		}
		if row.ExpiresAt.Valid && !c.now().Before(row.ExpiresAt.Time) {
			return ErrExpired
		}
		if row.Used >= row.Uses { // used up when read: no need to wait for the row
			return ErrUsedUp
		}
		res, err = tx.ExecContext(ctx, tx.Rebind(`UPDATE access_codes SET used = used + 1 WHERE id = ? AND used < uses`), row.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err == nil {
				err = ErrUsedUp
			}
			return err
		}
		return nil
	})
	if err != nil {
		if isRefusal(err) {
			return Grant{}, err
		}
		return Grant{}, fmt.Errorf("access: redeem a code in %s: %w", room, err)
	}
	return g, nil
}

// Held returns the grant of the latest code of room that visitor
// redeemed and that was not given back, as a repeat redemption (Again):
// a visitor who redeemed a code keeps it, even when the join that
// redeemed it had to wait (for a proof of work) and the next one brings
// no code. ok is false when they hold none.
func (c *Codes) Held(ctx context.Context, room, visitor string) (g Grant, ok bool, err error) {
	var lines []string
	err = c.db.SelectContext(ctx, &lines, c.db.Rebind(`SELECT c.line FROM access_redemptions r JOIN access_codes c ON c.id = r.code_id
		WHERE r.visitor = ? AND c.room = ? ORDER BY r.redeemed_at DESC LIMIT 1`), visitor, room)
	if err != nil {
		return Grant{}, false, fmt.Errorf("access: codes held in %s: %w", room, err)
	}
	if len(lines) == 0 {
		return Grant{}, false, nil
	}
	return Grant{Line: lines[0], Again: true}, true, nil
}

// Release gives back the use that g, visitor's redemption of code in
// room, took, when the place it was to buy could not be made: the code
// counts as never redeemed by them. A grant that took no use (Again)
// gives nothing back: the use it stands for bought a place before.
func (c *Codes) Release(ctx context.Context, room, code, visitor string, g Grant) error {
	norm, ok := Normalize(code)
	if !ok || g.Again {
		return nil
	}
	err := c.inTx(ctx, func(tx *sqlx.Tx) error {
		var id int64
		err := tx.GetContext(ctx, &id, tx.Rebind(`SELECT id FROM access_codes WHERE room = ? AND code_hash = ?`), room, c.hash.Sum(norm))
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM access_redemptions WHERE code_id = ? AND visitor = ?`), id, visitor)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return err
		}
		_, err = tx.ExecContext(ctx, tx.Rebind(`UPDATE access_codes SET used = used - 1 WHERE id = ? AND used > 0`), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("access: release a code in %s: %w", room, err)
	}
	return nil
}

// LineCount is a line's codes in a room: how many, and their uses.
type LineCount struct {
	Line  string `json:"line" db:"line"`
	Codes int64  `json:"codes" db:"codes"`
	Uses  int64  `json:"uses" db:"uses"`
	Used  int64  `json:"used" db:"used"`
	// Left counts the uses left of codes that have not expired.
	Left int64 `json:"left" db:"-"`
}

// Counts returns room's codes by line, in line order.
func (c *Codes) Counts(ctx context.Context, room string) ([]LineCount, error) {
	var rows []struct {
		LineCount
		Live int64 `db:"live"`
	}
	err := c.db.SelectContext(ctx, &rows, c.db.Rebind(`SELECT line, COUNT(*) AS codes, SUM(uses) AS uses, SUM(used) AS used,
		SUM(CASE WHEN expires_at IS NULL OR expires_at > ? THEN uses - used ELSE 0 END) AS live
		FROM access_codes WHERE room = ? GROUP BY line ORDER BY line`), c.now().UTC(), room)
	if err != nil {
		return nil, fmt.Errorf("access: count the codes of %s: %w", room, err)
	}
	out := make([]LineCount, len(rows))
	for i, r := range rows {
		out[i] = r.LineCount
		out[i].Left = r.Live
	}
	return out, nil
}

// Info is one code as the console lists it: never the code itself.
type Info struct {
	ID        int64      `json:"id" db:"id"`
	Hint      string     `json:"hint" db:"hint"`
	Line      string     `json:"line" db:"line"`
	Uses      int        `json:"uses" db:"uses"`
	Used      int        `json:"used" db:"used"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty" db:"expires_at"`
	CreatedAt time.Time  `json:"createdAt" db:"created_at"`
}

// List returns up to limit of room's codes made after the one of id
// after (0 for the first), oldest first: pages that codes made meanwhile
// cannot shift.
func (c *Codes) List(ctx context.Context, room string, after int64, limit int) ([]Info, error) {
	var out []Info
	err := c.db.SelectContext(ctx, &out, c.db.Rebind(`SELECT id, hint, line, uses, used, expires_at, created_at
		FROM access_codes WHERE room = ? AND id > ? ORDER BY id LIMIT ?`), room, after, limit)
	if err != nil {
		return nil, fmt.Errorf("access: list the codes of %s: %w", room, err)
	}
	return out, nil
}

// inTx runs fn in a transaction, committed when fn returns nil.
func (c *Codes) inTx(ctx context.Context, fn func(*sqlx.Tx) error) error {
	tx, err := c.db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func isRefusal(err error) bool {
	return errors.Is(err, ErrUnknown) || errors.Is(err, ErrWrongRoom) || errors.Is(err, ErrUsedUp) || errors.Is(err, ErrExpired)
}

func nullTime(t *time.Time) sql.NullTime {
	if t == nil {
		return sql.NullTime{}
	}
	return sql.NullTime{Time: t.UTC(), Valid: true}
}

// clip shortens a code quoted in an error.
func clip(s string) string {
	if len(s) > 24 {
		return s[:24] + "…"
	}
	return s
}

// Latest returns up to limit of room's codes, newest first.
func (c *Codes) Latest(ctx context.Context, room string, limit int) ([]Info, error) {
	var out []Info
	err := c.db.SelectContext(ctx, &out, c.db.Rebind(`SELECT id, hint, line, uses, used, expires_at, created_at
		FROM access_codes WHERE room = ? ORDER BY id DESC LIMIT ?`), room, limit)
	if err != nil {
		return nil, fmt.Errorf("access: list the latest codes of %s: %w", room, err)
	}
	return out, nil
}

// DeleteRoom deletes every code of room, and their redemptions, and
// returns how many codes there were.
func (c *Codes) DeleteRoom(ctx context.Context, room string) (int64, error) {
	var n int64
	err := c.inTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM access_redemptions WHERE code_id IN (SELECT id FROM access_codes WHERE room = ?)`), room); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM access_codes WHERE room = ?`), room)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("access: delete the codes of %s: %w", room, err)
	}
	return n, nil
}

// Revoke deletes room's code given as its text or, when code is empty, as
// its id, with its redemptions: nobody redeems it again, and the places
// it bought stay. It returns the code as the console lists it, and
// ErrUnknown when room has no such code.
func (c *Codes) Revoke(ctx context.Context, room, code string, id int64) (Info, error) {
	where, arg := "id = ?", any(id)
	if code != "" {
		norm, ok := Normalize(code)
		if !ok {
			return Info{}, ErrUnknown
		}
		where, arg = "code_hash = ?", c.hash.Sum(norm)
	}
	var info Info
	err := c.inTx(ctx, func(tx *sqlx.Tx) error {
		err := tx.GetContext(ctx, &info, tx.Rebind(`SELECT id, hint, line, uses, used, expires_at, created_at
			FROM access_codes WHERE room = ? AND `+where), room, arg)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrUnknown
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM access_redemptions WHERE code_id = ?`), info.ID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, tx.Rebind(`DELETE FROM access_codes WHERE id = ?`), info.ID)
		return err
	})
	switch {
	case errors.Is(err, ErrUnknown):
		return Info{}, err
	case err != nil:
		return Info{}, fmt.Errorf("access: revoke a code of %s: %w", room, err)
	}
	return info, nil
}
