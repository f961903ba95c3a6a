// Package absent remembers, briefly and in bounded memory, the keys a
// store said it does not have, so that a flood of requests for made-up
// names asks the store once per name and per while, not once per request.
package absent

import (
	"sync"
	"time"
)

// Set is a bounded set of keys known to be absent, each for a while. The
// zero Set is not usable: use New.
type Set struct {
	ttl time.Duration
	max int

	mu    sync.Mutex
	until map[string]time.Time
}

// New returns a Set that remembers a key for ttl, and at most max keys.
func New(ttl time.Duration, max int) *Set {
	return &Set{ttl: ttl, max: max, until: map[string]time.Time{}}
}

// Has reports whether key was added less than the Set's ttl before now.
func (s *Set) Has(key string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	until, ok := s.until[key]
	if ok && !now.Before(until) {
		delete(s.until, key)
		return false
	}
	return ok
}

// Add remembers key as absent from now. When the Set is full, expired keys
// go first, and if none has expired, an arbitrary one.
func (s *Set) Add(key string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.until[key]; !ok && len(s.until) >= s.max {
		for k, until := range s.until {
			if !now.Before(until) {
				delete(s.until, k)
			}
		}
		for k := range s.until {
			if len(s.until) < s.max {
				break
			}
			delete(s.until, k)
		}
	}
	s.until[key] = now.Add(s.ttl)
}

// Forget drops key, which now exists.
func (s *Set) Forget(key string) {
	s.mu.Lock()
	delete(s.until, key)
	s.mu.Unlock()
}

// Len returns the number of keys remembered, expired ones included.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.until)
}
