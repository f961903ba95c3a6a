package operator

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/argon2id"

	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
)

func TestOperators(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			s, err := New(storetest.Migrated(t, dialect), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, tt := range []struct {
				name, password string
				want           error
			}{
				{"alice", "correct horse battery", nil},
				{"bob.ops-2_x", "twelve chars", nil},
				{"alice", "another long password", ErrExists},
				{"Alice", "correct horse battery", ErrBadName},
				{"", "correct horse battery", ErrBadName},
				{strings.Repeat("a", 65), "correct horse battery", ErrBadName},
				{"a b", "correct horse battery", ErrBadName},
				{"admin", "correct horse battery", ErrBadName},
				{"system", "correct horse battery", ErrBadName},
				{"carol", "eleven char", ErrBadPassword},
				{"carol", strings.Repeat("x", 257), ErrBadPassword},
				{"carol", "가나다라마바사아자차카타", nil}, // 12 characters, 36 bytes
			} {
				if err := s.Add(ctx, tt.name, tt.password); !errors.Is(err, tt.want) {
					t.Errorf("Add(%q, %q) = %v, want %v", tt.name, tt.password, err, tt.want)
				}
			}
			if names, err := s.List(ctx); err != nil || !slices.Equal(names, []string{"alice", "bob.ops-2_x", "carol"}) {
				t.Fatalf("List = %v, %v", names, err)
			}
			for _, tt := range []struct {
				name, password string
				want           error
			}{
				{"alice", "correct horse battery", nil},
				{"alice", "correct horse batterY", ErrWrongPassword},
				{"nobody", "correct horse battery", ErrWrongPassword},
				{"Alice", "correct horse battery", ErrWrongPassword},
				{"alice", strings.Repeat("x", 1000), ErrWrongPassword},
				{"carol", "가나다라마바사아자차카타", nil},
			} {
				if err := s.Authenticate(ctx, tt.name, tt.password); !errors.Is(err, tt.want) {
					t.Errorf("Authenticate(%q, %q) = %v, want %v", tt.name, tt.password, err, tt.want)
				}
			}
			if has, err := s.Has(ctx); err != nil || !has {
				t.Fatalf("Has = %v, %v", has, err)
			}
			secret, _, err := s.StartSession(ctx, "bob.ops-2_x")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Remove(ctx, "bob.ops-2_x"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Session(ctx, secret); !errors.Is(err, ErrNoSession) {
				t.Fatalf("a removed operator's session: %v", err)
			}
			if err := s.Remove(ctx, "bob.ops-2_x"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Remove twice: %v", err)
			}
		})
	}
}

// TestAuthenticateTakesAsLong checks that an unknown name costs a hash too.
func TestAuthenticateTakesAsLong(t *testing.T) {
	ctx := context.Background()
	s, err := New(storetest.Migrated(t, store.Postgres), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, "alice", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	timed := func(name string) time.Duration {
		best := time.Hour
		for range 3 {
			start := time.Now()
			s.Authenticate(ctx, name, "wrong password!")
			best = min(best, time.Since(start))
		}
		return best
	}
	known, unknown := timed("alice"), timed("nobody")
	if unknown < known/3 {
		t.Fatalf("an unknown name answers in %v, a known one in %v: the difference tells names apart", unknown, known)
	}
}

// TestHashParameters: new hashes use OWASP's argon2id parameters (19 MiB,
// 2 passes, 1 lane); a hash made with the earlier ones (64 MiB, 1 pass, 2
// lanes) still verifies, its parameters being in its PHC string.
func TestHashParameters(t *testing.T) {
	ctx := context.Background()
	db := storetest.Migrated(t, store.Postgres)
	s, err := New(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, "alice", "correct horse battery"); err != nil {
		t.Fatal(err)
	}
	var stored string
	if err := db.Get(&stored, `SELECT password_hash FROM operators WHERE name = 'alice'`); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{stored, s.dummy} {
		if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
			t.Fatalf("hash %q, want m=19456,t=2,p=1", h)
		}
	}
	old, err := argon2id.CreateHash("an older password", &argon2id.Params{Memory: 64 * 1024, Iterations: 1, Parallelism: 2, SaltLength: 16, KeyLength: 32})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO operators (name, password_hash, created_at) VALUES ('bob', $1, now())`, old); err != nil {
		t.Fatal(err)
	}
	if err := s.Authenticate(ctx, "bob", "an older password"); err != nil {
		t.Fatalf("a hash of the earlier parameters: %v", err)
	}
	if err := s.Authenticate(ctx, "bob", "an older passworD"); !errors.Is(err, ErrWrongPassword) {
		t.Fatalf("a wrong password against the earlier parameters: %v", err)
	}
}

func TestSessions(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			db := storetest.Migrated(t, dialect)
			s, err := New(db, Options{})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
			s.now = func() time.Time { return now }
			secret, sess, err := s.StartSession(ctx, "admin")
			if err != nil {
				t.Fatal(err)
			}
			if len(secret) != 43 || len(sess.CSRF) != 43 || secret == sess.CSRF {
				t.Fatalf("secret %d chars, csrf %d chars", len(secret), len(sess.CSRF))
			}
			// Only the secret's hash is stored.
			var stored int
			db.Get(&stored, db.Rebind(`SELECT COUNT(*) FROM admin_sessions WHERE id_hash = ?`), []byte(secret))
			if stored != 0 {
				t.Fatal("the secret itself is stored")
			}
			got, err := s.Session(ctx, secret)
			if err != nil || got.Operator != "admin" || got.CSRF != sess.CSRF {
				t.Fatalf("Session = %+v, %v", got, err)
			}
			for _, bad := range []string{"", secret + "x", strings.Repeat("a", 200)} {
				if _, err := s.Session(ctx, bad); !errors.Is(err, ErrNoSession) {
					t.Errorf("Session(%q) = %v", bad, err)
				}
			}
			// Just before expiry it lives; at expiry it is gone, and deleted.
			now = now.Add(SessionTTL - time.Second)
			if _, err := s.Session(ctx, secret); err != nil {
				t.Fatalf("before expiry: %v", err)
			}
			now = now.Add(time.Second)
			if _, err := s.Session(ctx, secret); !errors.Is(err, ErrNoSession) {
				t.Fatalf("at expiry: %v", err)
			}
			var left int
			db.Get(&left, `SELECT COUNT(*) FROM admin_sessions`)
			if left != 0 {
				t.Fatalf("%d sessions left after expiry", left)
			}
			// Starting a session sweeps the expired ones.
			old, _, _ := s.StartSession(ctx, "a")
			now = now.Add(SessionTTL)
			fresh, _, _ := s.StartSession(ctx, "b")
			db.Get(&left, `SELECT COUNT(*) FROM admin_sessions`)
			if left != 1 {
				t.Fatalf("%d sessions after the sweep, want 1", left)
			}
			if _, err := s.Session(ctx, old); !errors.Is(err, ErrNoSession) {
				t.Fatal("an expired session lives")
			}
			if err := s.EndSession(ctx, fresh); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Session(ctx, fresh); !errors.Is(err, ErrNoSession) {
				t.Fatal("an ended session lives")
			}
		})
	}
}
