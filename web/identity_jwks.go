package web

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"waitingroom/server/egress"
	"waitingroom/server/identity"
)

// JWKS fetches and caches the shops' key sets by URL (a room's identity
// keys, identity.KeySource). A set is kept for
// MaxAge; a token whose kid the cached set lacks fetches it again, at
// most once per MinRefresh, so that a shop's new key is found at once
// while made-up kids cannot make the room fetch in a loop. A set that
// cannot be fetched again is used while it is younger than Stale.
type JWKS struct {
	Client                    *http.Client
	Now                       func() time.Time
	MaxAge, MinRefresh, Stale time.Duration

	mu   sync.Mutex
	sets map[string]*jwksEntry
}

type jwksEntry struct {
	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fetched time.Time // when keys were fetched; zero for never
	tried   time.Time // the last fetch, successful or not
}

// NewJWKS returns a fetcher whose client dials only addresses egress
// allows, with a 5 s timeout and no redirects, on the clock now.
func NewJWKS(now func() time.Time) *JWKS {
	return &JWKS{
		Client: &http.Client{
			Timeout:       5 * time.Second,
			Transport:     &http.Transport{DialContext: (&net.Dialer{Timeout: 5 * time.Second, Control: egress.Control}).DialContext},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		Now: now, MaxAge: 10 * time.Minute, MinRefresh: 30 * time.Second, Stale: 24 * time.Hour,
	}
}

// Source returns the key source of url.
func (j *JWKS) Source(url string) identity.KeySource { return jwksSource{j, url} }

type jwksSource struct {
	j   *JWKS
	url string
}

func (s jwksSource) Keys(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	return s.j.keys(ctx, s.url, kid)
}

func (j *JWKS) entry(url string) *jwksEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.sets == nil {
		j.sets = map[string]*jwksEntry{}
	}
	e := j.sets[url]
	if e == nil {
		e = &jwksEntry{}
		j.sets[url] = e
	}
	return e
}

func (j *JWKS) keys(ctx context.Context, url, kid string) ([]jose.JSONWebKey, error) {
	e := j.entry(url)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := j.Now()
	have := !e.fetched.IsZero()
	usable := have && now.Sub(e.fetched) < j.Stale
	known := kid == "" || len(pickNamed(e.keys, kid)) > 0
	if have && now.Sub(e.fetched) < j.MaxAge && known {
		return identity.Pick(e.keys, kid), nil
	}
	// Stale, or a kid the set lacks: fetch, unless a fetch was tried
	// lately.
	if !e.tried.IsZero() && now.Sub(e.tried) < j.MinRefresh {
		if usable {
			return identity.Pick(e.keys, kid), nil
		}
		return nil, fmt.Errorf("fetch %s: it failed less than %v ago", url, j.MinRefresh)
	}
	e.tried = now
	// The fetch is the room's, not the caller's: a buyer who gives up
	// must not leave the shop's keys unfetched for MinRefresh.
	keys, err := j.fetch(context.WithoutCancel(ctx), url)
	if err != nil {
		if usable {
			return identity.Pick(e.keys, kid), nil
		}
		return nil, err
	}
	e.keys, e.fetched = keys, now
	return identity.Pick(keys, kid), nil
}

func pickNamed(keys []jose.JSONWebKey, kid string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range keys {
		if k.KeyID == kid {
			out = append(out, k)
		}
	}
	return out
}

// fetch GETs url's key set.
func (j *JWKS) fetch(ctx context.Context, url string) ([]jose.JSONWebKey, error) {
	if err := identity.CheckJWKSURL(url); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := j.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, identity.MaxJWKS+1))
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	if len(b) > identity.MaxJWKS {
		return nil, fmt.Errorf("fetch %s: the key set is over %d KiB", url, identity.MaxJWKS>>10)
	}
	keys, err := identity.ParseJWKS(b)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	return keys, nil
}
