package console

import (
	"strconv"
	"testing"
	"time"
)

// TestLockoutsGrow: SigninBudget failures are let through, then each
// further failure locks the key out for twice as long as the one before,
// up to signinLockoutMax; a forgiven attempt leaves no trace, and a
// cleared key starts again.
func TestLockoutsGrow(t *testing.T) {
	l := newLockouts(8)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := range SigninBudget {
		if wait, _ := l.attempt("alice", now); wait != 0 {
			t.Fatalf("failure %d refused for %v", i+1, wait)
		}
	}
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute,
		32 * time.Minute, time.Hour, time.Hour}
	for i, lock := range want {
		wait, _ := l.attempt("alice", now)
		if wait != lock {
			t.Fatalf("lockout %d: %v, want %v", i+1, wait, lock)
		}
		if wait, _ := l.attempt("alice", now.Add(lock-time.Second)); wait != time.Second {
			t.Fatalf("lockout %d, a second before its end: %v", i+1, wait)
		}
		now = now.Add(lock)
		wait, tk := l.attempt("alice", now)
		if wait != 0 {
			t.Fatalf("after lockout %d: %v", i+1, wait)
		}
		l.forgive(tk) // a busy check: as if never made
		if wait, _ := l.attempt("alice", now); wait != 0 {
			t.Fatalf("after lockout %d, once forgiven: %v", i+1, wait)
		}
		if i+1 < len(want) {
			if wait, _ := l.attempt("alice", now); wait != want[i+1] {
				t.Fatalf("the failure after lockout %d locks for %v, want %v", i+1, wait, want[i+1])
			}
		}
	}
	l.clear("alice")
	if wait, _ := l.attempt("alice", now); wait != 0 {
		t.Fatalf("cleared: %v", wait)
	}
}

// TestLockoutsForgetIdle: a key idle for signinForget, and no longer
// locked out, starts with a whole budget again.
func TestLockoutsForgetIdle(t *testing.T) {
	l := newLockouts(8)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for range SigninBudget - 1 {
		l.attempt("bob", now)
	}
	now = now.Add(signinForget)
	for i := range SigninBudget - 1 {
		if wait, _ := l.attempt("bob", now); wait != 0 {
			t.Fatalf("a day later, failure %d: %v", i+1, wait)
		}
	}
}

// TestLockoutsAreBounded: a million distinct keys keep the lockouts at
// their cap, and a key locked out stays locked out through them.
func TestLockoutsAreBounded(t *testing.T) {
	const keys = 1_000_000
	g := newSigninGuard(time.Now)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for range SigninBudget {
		g.accounts.attempt("alice", now)
	}
	for i := range keys {
		at := now.Add(time.Duration(i) * time.Microsecond)
		k := strconv.Itoa(i)
		g.accounts.attempt("n"+k, at)
		g.networks.attempt("10."+k, at)
		g.device.attempt("d"+k, at)
	}
	for name, l := range map[string]*lockouts{"accounts": g.accounts, "networks": g.networks, "devices": g.device} {
		if n := l.len(); n != signinRecords {
			t.Errorf("%s: %d records after %d keys, want %d", name, n, keys, signinRecords)
		}
		if n := l.used.Len(); n != signinRecords {
			t.Errorf("%s: %d in the LRU list, want %d", name, n, signinRecords)
		}
	}
	if wait, _ := g.accounts.attempt("alice", now.Add(2*time.Second)); wait <= 0 {
		t.Fatal("a flood of names wiped alice's lockout")
	}
}
