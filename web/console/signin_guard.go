package console

import (
	"container/list"
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"waitingroom/server/operator"
)

// The console's password sign-ins are guarded by three lockouts, kept in
// this process's memory:
//
//   - per account: SigninBudget failed untrusted attempts at one operator
//     name (from any number of addresses), then a lockout of
//     signinLockoutBase that doubles with every further failure, up to
//     signinLockoutMax;
//   - per client network, the same: a network whose attempts only fail is
//     refused before any password is hashed, for longer each time;
//   - per device cookie, the same: a browser that signed in to the account
//     before is exempt from the first two, until its own cookie has
//     failed too often (a stolen cookie gives no more guesses than an
//     account).
//
// A success clears the network's and the device's record (and the
// account's, when the attempt was untrusted). Records idle for
// signinForget are dropped, and each lockout keeps at most
// signinRecords records: when full, it drops the least recently used
// record that is not locked out (looking at the signinEvictScan oldest),
// so that a flood of new names or addresses cannot wipe an account's
// lockout cheaply.
const (
	SigninBudget      = 10
	signinLockoutBase = time.Minute
	signinLockoutMax  = time.Hour
	signinForget      = 24 * time.Hour
	signinRecords     = 10000
	signinEvictScan   = 16
)

// signinGuard holds the sign-in's lockouts and their clock.
type signinGuard struct {
	now                        func() time.Time
	accounts, networks, device *lockouts
}

func newSigninGuard(now func() time.Time) *signinGuard {
	return &signinGuard{now: now,
		accounts: newLockouts(signinRecords),
		networks: newLockouts(signinRecords),
		device:   newLockouts(signinRecords)}
}

// accountKey is the lockout record of an operator name: names no
// operator can have share one record, so that they cannot fill the
// lockout.
func accountKey(name string) string {
	if !operator.ValidName(name) {
		return ""
	}
	return name
}

// lockouts counts failures per key: after SigninBudget of them, each
// further failure locks the key out for signinLockoutBase, doubled for
// each failure beyond the budget, at most signinLockoutMax. At most max
// keys are kept.
type lockouts struct {
	max int

	mu    sync.Mutex
	byKey map[string]*list.Element // of *lockout
	used  *list.List               // most recently used first
}

type lockout struct {
	key         string
	fails       int
	until, last time.Time
}

// lockTicket is one attempt counted by lockouts.attempt, to forgive.
type lockTicket struct {
	key  string
	prev time.Time // the record's lockout before the attempt
}

func newLockouts(max int) *lockouts {
	return &lockouts{max: max, byKey: map[string]*list.Element{}, used: list.New()}
}

// attempt counts one attempt by key as a failure until forgiven or
// cleared, unless key is locked out: then it returns how long for and
// counts nothing. Checking and counting under one lock, a parallel burst
// gets no more attempts through than a sequence.
func (l *lockouts) attempt(key string, now time.Time) (time.Duration, lockTicket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.recordLocked(key, now)
	if now.Before(r.until) {
		return r.until.Sub(now), lockTicket{}
	}
	t := lockTicket{key: key, prev: r.until}
	r.fails++
	r.last = now
	if over := r.fails - SigninBudget; over >= 0 {
		r.until = now.Add(lockoutFor(over))
	}
	return 0, t
}

// lockoutFor is the lockout after over failures beyond the budget.
func lockoutFor(over int) time.Duration {
	if over >= 16 {
		return signinLockoutMax
	}
	return min(signinLockoutBase<<over, signinLockoutMax)
}

// forgive takes back the attempt of t: it was never checked.
func (l *lockouts) forgive(t lockTicket) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.byKey[t.key]; e != nil {
		r := e.Value.(*lockout)
		r.fails = max(0, r.fails-1)
		r.until = t.prev
	}
}

// clear forgets key's failures: it signed in.
func (l *lockouts) clear(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.byKey[key]; e != nil {
		l.used.Remove(e)
		delete(l.byKey, key)
	}
}

// len returns how many keys are kept.
func (l *lockouts) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byKey)
}

// recordLocked returns key's record, made when there is none (dropping
// one when full) and reset when idle for signinForget.
func (l *lockouts) recordLocked(key string, now time.Time) *lockout {
	if e := l.byKey[key]; e != nil {
		r := e.Value.(*lockout)
		if now.Sub(r.last) >= signinForget && !now.Before(r.until) {
			r.fails, r.until = 0, time.Time{}
		}
		l.used.MoveToFront(e)
		return r
	}
	if len(l.byKey) >= l.max {
		l.evictLocked(now)
	}
	r := &lockout{key: key, last: now}
	l.byKey[key] = l.used.PushFront(r)
	return r
}

// evictLocked drops the least recently used record that is not locked
// out among the signinEvictScan oldest, or the oldest when all are.
func (l *lockouts) evictLocked(now time.Time) {
	victim := l.used.Back()
	for e, n := victim, 0; e != nil && n < signinEvictScan; e, n = e.Prev(), n+1 {
		if r := e.Value.(*lockout); !now.Before(r.until) {
			victim = e
			break
		}
	}
	if victim != nil {
		l.used.Remove(victim)
		delete(l.byKey, victim.Value.(*lockout).key)
	}
}

// randomDevices signs device cookies with a random key: they name
// browsers to this process alone.
func randomDevices() (*operator.Devices, error) {
	secret := make([]byte, 32)
	rand.Read(secret) // never fails (crypto/rand)
	d, err := operator.NewDevices(secret)
	if err != nil {
		return nil, fmt.Errorf("console: device key: %w", err)
	}
	return d, nil
}
