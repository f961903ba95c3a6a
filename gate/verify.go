package gate

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

const (
	// refetchEvery is the least time between two JWKS fetches for an
	// unknown kid.
	refetchEvery = 30 * time.Second
	// jwksMaxAge is when a JWKS that still has the pass's kid is fetched
	// again, so that a key dropped by a rotation stops working here too.
	jwksMaxAge = 5 * time.Minute
	// leeway is the clock skew allowed on exp and iat.
	leeway = 5 * time.Second
	// maxPassLen bounds a pass before it is parsed.
	maxPassLen = 4096
	// maxKeys bounds the keys taken from a JWKS.
	maxKeys = 16
)

// errKeyNotYet: the pass names a key the cached JWKS lacks, and the JWKS
// was fetched too recently to fetch it again. The buyer retries.
var errKeyNotYet = errors.New("pass key unknown; JWKS fetched recently")

// keyCache is the room's JWKS, kept while waitingroom is down.
type keyCache struct {
	mu      sync.Mutex
	keys    map[string]ed25519.PublicKey
	fetched time.Time // last successful fetch
	tried   time.Time // last attempt
	lastErr error     // the last attempt's error
	fetchMu sync.Mutex
}

// passClaims are the claims of a pass (see package server/pass of
// waitingroom for the signer).
type passClaims struct {
	jwt.Claims
	Room string `json:"room"`
}

// verify checks a pass offline: EdDSA only, a key of the room's JWKS, the
// signature, exp (with leeway), iat not in the future, the room and the
// audience of this gate, and a jti. Errors: errPassInvalid, errPassExpired,
// errPassStale (a kid the JWKS lacks even after a refetch), errKeyNotYet,
// or errUnavailable when the JWKS cannot be had.
func (g *Gate) verify(ctx context.Context, compact string) (passClaims, error) {
	var c passClaims
	if compact == "" || len(compact) > maxPassLen {
		return c, fmt.Errorf("gate: verify: %w: empty or too long", errPassInvalid)
	}
	tok, err := jwt.ParseSigned(compact, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return c, fmt.Errorf("gate: verify: %w: %v", errPassInvalid, err)
	}
	if len(tok.Headers) != 1 || tok.Headers[0].KeyID == "" {
		return c, fmt.Errorf("gate: verify: %w: no kid", errPassInvalid)
	}
	key, err := g.key(ctx, tok.Headers[0].KeyID)
	if err != nil {
		return c, err
	}
	if err := tok.Claims(key, &c); err != nil {
		return c, fmt.Errorf("gate: verify: %w: %v", errPassInvalid, err)
	}
	switch {
	case c.Expiry == nil || c.ID == "":
		return c, fmt.Errorf("gate: verify: %w: no exp or jti", errPassInvalid)
	case c.Room != g.opts.Room:
		return c, fmt.Errorf("gate: verify: %w: another room", errPassInvalid)
	case len(c.Audience) != 1 || !strings.EqualFold(c.Audience[0], g.opts.Audience):
		return c, fmt.Errorf("gate: verify: %w: another audience", errPassInvalid)
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Time: g.now()}, leeway); err != nil {
		if errors.Is(err, jwt.ErrExpired) {
			return c, fmt.Errorf("gate: verify: %w", errPassExpired)
		}
		return c, fmt.Errorf("gate: verify: %w: %v", errPassInvalid, err)
	}
	return c, nil
}

// key returns the public key kid from the cached JWKS, fetching it when the
// kid is unknown (at most once per refetchEvery, or downProbeEvery after a
// failed fetch) or the cache is old. A failed fetch keeps the cached keys.
func (g *Gate) key(ctx context.Context, kid string) (ed25519.PublicKey, error) {
	kc := g.keys
	now := g.now()
	kc.mu.Lock()
	k, ok := kc.keys[kid]
	old := now.Sub(kc.fetched) >= jwksMaxAge
	wait := refetchEvery
	if kc.lastErr != nil {
		wait = downProbeEvery // the last fetch failed: try again sooner
	}
	mayFetch := kc.tried.IsZero() || now.Sub(kc.tried) >= wait
	kc.mu.Unlock()
	if ok && !old {
		return k, nil
	}
	if !mayFetch {
		if ok {
			return k, nil
		}
		return nil, fmt.Errorf("gate: verify: %w", errKeyNotYet)
	}
	fetchErr := g.fetchKeys(ctx)
	kc.mu.Lock()
	k2, ok2 := kc.keys[kid]
	kc.mu.Unlock()
	switch {
	case fetchErr != nil && ok:
		return k, nil // stale but usable while waitingroom is down
	case fetchErr != nil:
		return nil, fetchErr
	case !ok2:
		// Not a forgery for sure (a rotation may have dropped the key):
		// the buyer is told to go back to the room, not that the link is
		// foreign.
		return nil, fmt.Errorf("gate: verify: %w: unknown kid", errPassStale)
	}
	return k2, nil
}

// fetchKeys fetches the JWKS, one fetch at a time (a request that waited
// for another's fetch uses its result).
func (g *Gate) fetchKeys(ctx context.Context) error {
	kc := g.keys
	kc.fetchMu.Lock()
	defer kc.fetchMu.Unlock()
	start := g.now()
	kc.mu.Lock()
	if !kc.tried.IsZero() && start.Sub(kc.tried) < time.Second {
		err := kc.lastErr
		kc.mu.Unlock()
		return err // fetched (or tried) while this one waited
	}
	kc.tried = start
	kc.mu.Unlock()
	err := g.fetchKeysOnce(ctx, start)
	kc.mu.Lock()
	kc.lastErr = err
	kc.mu.Unlock()
	return err
}

func (g *Gate) fetchKeysOnce(ctx context.Context, start time.Time) error {
	kc := g.keys
	a, err := g.call(ctx, "jwks", http.MethodGet, "/.well-known/jwks.json", nil, false, slotWait)
	if err != nil {
		return err
	}
	var set jose.JSONWebKeySet
	if a.status != http.StatusOK || json.Unmarshal(a.body, &set) != nil {
		return g.refused("jwks", a)
	}
	keys := make(map[string]ed25519.PublicKey)
	for _, k := range set.Keys {
		pub, ok := k.Key.(ed25519.PublicKey)
		if !ok || k.KeyID == "" || (k.Algorithm != "" && k.Algorithm != string(jose.EdDSA)) || (k.Use != "" && k.Use != "sig") {
			continue
		}
		if len(keys) == maxKeys {
			break
		}
		keys[k.KeyID] = pub
	}
	if len(keys) == 0 {
		return g.refused("jwks", a)
	}
	kc.mu.Lock()
	kc.keys, kc.fetched = keys, start
	kc.mu.Unlock()
	return nil
}
