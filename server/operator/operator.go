// Package operator keeps the console's operator accounts (argon2id
// password hashes) and their signed-in sessions, on PostgreSQL or the
// embedded SQLite.
package operator

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/alexedwards/argon2id"

	"waitingroom/server/store"
)

// Errors of the operator store.
var (
	ErrBadName       = errors.New("operator: a name is 1 to 64 characters of a-z, 0-9, '.', '_' and '-'")
	ErrBadPassword   = fmt.Errorf("operator: a password is at least %d characters and at most %d bytes", MinPassword, MaxPassword)
	ErrExists        = errors.New("operator: an operator of that name already exists")
	ErrNotFound      = errors.New("operator: no such operator")
	ErrWrongPassword = errors.New("operator: wrong name or password")
	ErrNoSession     = errors.New("operator: no such session, or it expired")
)

// Password bounds: long enough to resist guessing, short enough that
// hashing one costs a bounded amount of work.
const (
	MinPassword = 12  // characters
	MaxPassword = 256 // bytes
)

// SessionTTL is how long a console session lasts.
const SessionTTL = 12 * time.Hour

// DefaultHash is the argon2id cost of new hashes: 19 MiB, 2 passes, 1
// lane (OWASP's recommendation), so that the few checks the console runs
// at once stay small. A stored hash names its own parameters (PHC
// string): hashes made with others still verify.
func DefaultHash() argon2id.Params {
	return argon2id.Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}
}

// Options tunes a Store; the zero value is production's.
type Options struct {
	// Hash is the argon2id cost of new hashes; nil is DefaultHash.
	Hash *argon2id.Params
	// Now is the clock of sessions; nil is time.Now.
	Now func() time.Time
}

var validName = regexp.MustCompile(`^[a-z0-9._-]{1,64}$`)

// ValidName reports whether name may name an operator. "admin" (the
// ADMIN_TOKEN's sessions) and "system" (the sale's own events) are the
// audit log's other actors, so no operator may take them.
func ValidName(name string) bool {
	return validName.MatchString(name) && name != "admin" && name != "system"
}

// ValidPassword reports whether password is within the bounds.
func ValidPassword(password string) bool {
	return len([]rune(password)) >= MinPassword && len(password) <= MaxPassword
}

// Store keeps operators and sessions in db.
type Store struct {
	db *store.DB
	// dummy is a hash of a random password: checking against it when the
	// operator does not exist takes as long as checking a real one.
	dummy string
	hash  *argon2id.Params
	now   func() time.Time
}

// New returns a Store over db, whose migrations have applied.
func New(db *store.DB, o Options) (*Store, error) {
	s := &Store{db: db, hash: o.Hash, now: o.Now}
	if s.hash == nil {
		def := DefaultHash()
		s.hash = &def
	}
	if s.now == nil {
		s.now = time.Now
	}
	dummy, err := argon2id.CreateHash(rand.Text(), s.hash)
	if err != nil {
		return nil, fmt.Errorf("operator: dummy hash: %w", err)
	}
	s.dummy = dummy
	return s, nil
}

// Add creates an operator with password.
func (s *Store) Add(ctx context.Context, name, password string) error {
	if !ValidName(name) {
		return ErrBadName
	}
	if !ValidPassword(password) {
		return ErrBadPassword
	}
	hash, err := argon2id.CreateHash(password, s.hash)
	if err != nil {
		return fmt.Errorf("operator: hash password: %w", err)
	}
	res, err := s.db.ExecContext(ctx, s.db.Rebind(
		`INSERT INTO operators (name, password_hash, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`),
		name, hash, s.now().UTC())
	if err != nil {
		return fmt.Errorf("operator: add %s: %w", name, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return ErrExists
	}
	return nil
}

// Remove deletes an operator and ends their sessions.
func (s *Store) Remove(ctx context.Context, name string) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("operator: remove %s: %w", name, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM operators WHERE name = ?`), name)
	if err != nil {
		return fmt.Errorf("operator: remove %s: %w", name, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return ErrNotFound
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM admin_sessions WHERE operator = ?`), name); err != nil {
		return fmt.Errorf("operator: end sessions of %s: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("operator: remove %s: %w", name, err)
	}
	return nil
}

// List returns the operators' names, sorted.
func (s *Store) List(ctx context.Context) ([]string, error) {
	var names []string
	if err := s.db.SelectContext(ctx, &names, `SELECT name FROM operators ORDER BY name`); err != nil {
		return nil, fmt.Errorf("operator: list: %w", err)
	}
	return names, nil
}

// Has reports whether any operator exists.
func (s *Store) Has(ctx context.Context) (bool, error) {
	var n int
	if err := s.db.GetContext(ctx, &n, `SELECT COUNT(*) FROM operators`); err != nil {
		return false, fmt.Errorf("operator: count: %w", err)
	}
	return n > 0, nil
}

// Authenticate checks name and password. It takes as long whether or not
// the operator exists, and returns ErrWrongPassword for either mistake.
func (s *Store) Authenticate(ctx context.Context, name, password string) error {
	hash := s.dummy
	known := false
	if ValidName(name) && len(password) <= MaxPassword {
		var stored string
		err := s.db.GetContext(ctx, &stored, s.db.Rebind(`SELECT password_hash FROM operators WHERE name = ?`), name)
		switch {
		case err == nil:
			hash, known = stored, true
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("operator: authenticate: %w", err)
		}
	}
	if len(password) > MaxPassword {
		password = password[:MaxPassword] // bounded work; the answer is still wrong
	}
	ok, err := argon2id.ComparePasswordAndHash(password, hash)
	if err != nil {
		return fmt.Errorf("operator: authenticate: %w", err)
	}
	if !ok || !known {
		return ErrWrongPassword
	}
	return nil
}

// Session is a signed-in console session.
type Session struct {
	Operator string
	CSRF     string
	Expires  time.Time
}

// randomToken returns n random bytes, base64url without padding.
func randomToken(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashSecret(secret string) []byte {
	d := sha256.Sum256([]byte(secret))
	return d[:]
}

// StartSession opens a session for operator (a name, or for the admin
// token "admin:" and the token's fingerprint, which the console checks)
// and returns the cookie's secret; only its SHA-256 is
// stored. Expired sessions are deleted on the way.
func (s *Store) StartSession(ctx context.Context, operator string) (secret string, sess Session, err error) {
	now := s.now().UTC()
	if _, err := s.db.ExecContext(ctx, s.db.Rebind(`DELETE FROM admin_sessions WHERE expires_at <= ?`), now); err != nil {
		return "", Session{}, fmt.Errorf("operator: delete expired sessions: %w", err)
	}
	secret = randomToken(32)
	sess = Session{Operator: operator, CSRF: randomToken(32), Expires: now.Add(SessionTTL)}
	_, err = s.db.ExecContext(ctx, s.db.Rebind(
		`INSERT INTO admin_sessions (id_hash, operator, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?)`),
		hashSecret(secret), operator, sess.CSRF, now, sess.Expires)
	if err != nil {
		return "", Session{}, fmt.Errorf("operator: start session: %w", err)
	}
	return secret, sess, nil
}

// Session returns the live session of the cookie secret, or ErrNoSession.
// An expired one is deleted.
func (s *Store) Session(ctx context.Context, secret string) (Session, error) {
	if secret == "" || len(secret) > 128 {
		return Session{}, ErrNoSession
	}
	id := hashSecret(secret)
	var row struct {
		Operator string    `db:"operator"`
		CSRF     string    `db:"csrf"`
		Expires  time.Time `db:"expires_at"`
	}
	err := s.db.GetContext(ctx, &row, s.db.Rebind(`SELECT operator, csrf, expires_at FROM admin_sessions WHERE id_hash = ?`), id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return Session{}, ErrNoSession
	case err != nil:
		return Session{}, fmt.Errorf("operator: session: %w", err)
	}
	if !s.now().Before(row.Expires) {
		s.db.ExecContext(ctx, s.db.Rebind(`DELETE FROM admin_sessions WHERE id_hash = ?`), id)
		return Session{}, ErrNoSession
	}
	return Session{Operator: row.Operator, CSRF: row.CSRF, Expires: row.Expires}, nil
}

// EndSession deletes the session of the cookie secret.
func (s *Store) EndSession(ctx context.Context, secret string) error {
	if _, err := s.db.ExecContext(ctx, s.db.Rebind(`DELETE FROM admin_sessions WHERE id_hash = ?`), hashSecret(secret)); err != nil {
		return fmt.Errorf("operator: end session: %w", err)
	}
	return nil
}
