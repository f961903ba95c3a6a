package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/jonboulle/clockwork"

	"waitingroom/server/identity"
	"waitingroom/server/identity/identitytest"
)

// TestJWKS: a shop's key set is fetched once and kept; a token of a new
// kid fetches it again, at most once per MinRefresh, so that made-up kids
// do not make it fetch in a loop; a set that cannot be fetched again is
// used while not stale.
func TestJWKS(t *testing.T) {
	ctx := context.Background()
	k1, k2 := identitytest.NewKey(t, "ec", "k1"), identitytest.NewKey(t, "ec", "k2")
	var served atomic.Pointer[jose.JSONWebKeySet]
	var fetches atomic.Int64
	var down atomic.Bool
	served.Store(&jose.JSONWebKeySet{Keys: []jose.JSONWebKey{k1.Public}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved.json" {
			http.Redirect(w, r, "/jwks.json", http.StatusFound)
			return
		}
		if r.URL.Path == "/huge.json" {
			w.Write([]byte(`{"keys":[` + strings.Repeat(" ", identity.MaxJWKS) + `]}`))
			return
		}
		fetches.Add(1)
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		json.NewEncoder(w).Encode(served.Load())
	}))
	t.Cleanup(srv.Close)
	clock := clockwork.NewFakeClockAt(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	j := NewJWKS(clock.Now)
	src := j.Source(srv.URL + "/jwks.json")
	claim := func() jwt.Claims {
		return jwt.Claims{Subject: "m", Audience: jwt.Audience{"drop"}, Expiry: jwt.NewNumericDate(clock.Now().Add(time.Hour))}
	}
	steps := []struct {
		name    string
		do      func()
		token   func() string
		want    error
		fetches int64
	}{
		{"the first token fetches", nil, func() string { return k1.Sign(t, claim()) }, nil, 1},
		{"the next is served from the cache", nil, func() string { return k1.Sign(t, claim()) }, nil, 1},
		{"a new kid within MinRefresh of the fetch: not yet", func() {
			served.Store(&jose.JSONWebKeySet{Keys: []jose.JSONWebKey{k1.Public, k2.Public}})
		}, func() string { return k2.Sign(t, claim()) }, identity.ErrSignature, 1},
		{"a new kid after it: fetched again at once", func() { clock.Advance(j.MinRefresh) }, func() string { return k2.Sign(t, claim()) }, nil, 2},
		{"a made-up kid right after: no fetch", nil, func() string { return identitytest.NewKey(t, "ec", "zz").Sign(t, claim()) }, identity.ErrSignature, 2},
		{"past MaxAge, down: the kept set", func() { clock.Advance(11 * time.Minute); down.Store(true) }, func() string { return k1.Sign(t, claim()) }, nil, 3},
		{"down, right after: no fetch", nil, func() string { return k2.Sign(t, claim()) }, nil, 3},
		{"back up: fetched", func() { clock.Advance(time.Minute); down.Store(false) }, func() string { return k2.Sign(t, claim()) }, nil, 4},
	}
	for _, s := range steps {
		if s.do != nil {
			s.do()
		}
		_, err := identity.Verify(ctx, s.token(), "drop", src, clock.Now())
		if !errors.Is(err, s.want) || (err != nil) != (s.want != nil) || fetches.Load() != s.fetches {
			t.Fatalf("%s: %v after %d fetches, want %v after %d", s.name, err, fetches.Load(), s.want, s.fetches)
		}
	}
	// A buyer who gives up does not leave the keys unfetched: the fetch
	// is the room's.
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := identity.Verify(gone, k1.Sign(t, claim()), "drop", j.Source(srv.URL+"/jwks.json?fresh"), clock.Now()); err != nil {
		t.Fatalf("a cancelled caller on a cold cache: %v", err)
	}
	// A redirect is not followed, and a set over identity.MaxJWKS is not read.
	for _, path := range []string{"/moved.json", "/huge.json"} {
		if _, err := identity.Verify(ctx, k1.Sign(t, claim()), "drop", j.Source(srv.URL+path), clock.Now()); err == nil || identity.Refused(err) {
			t.Fatalf("%s: %v, want the fetch's error", path, err)
		}
	}
	// Never fetched and down: the keys' error, not a refusal.
	down.Store(true)
	_, err := identity.Verify(ctx, k1.Sign(t, claim()), "drop", j.Source(srv.URL+"/other.json"), clock.Now())
	if err == nil || identity.Refused(err) {
		t.Fatalf("keys that cannot be fetched: %v, want the fetch's error", err)
	}
}
