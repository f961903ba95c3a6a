package identity

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"

	"waitingroom/server/egress"
)

// MaxPastedKeys bounds the text of pasted keys, and MaxJWKS a fetched key
// set.
const (
	MaxPastedKeys = 64 << 10
	MaxJWKS       = 64 << 10
)

// Static are keys an operator pasted.
type Static []jose.JSONWebKey

// Keys returns every key when kid is empty, else the keys of kid and
// those without a kid (a pasted PEM key has none).
func (s Static) Keys(_ context.Context, kid string) ([]jose.JSONWebKey, error) {
	return pick(s, kid), nil
}

func pick(keys []jose.JSONWebKey, kid string) []jose.JSONWebKey {
	if kid == "" {
		return keys
	}
	var out, unnamed []jose.JSONWebKey
	for _, k := range keys {
		switch k.KeyID {
		case kid:
			out = append(out, k)
		case "":
			unnamed = append(unnamed, k)
		}
	}
	return append(out, unnamed...)
}

// ParseKeys reads keys an operator pasted: PEM public keys ("PUBLIC
// KEY"), a JWK, or a JWK set. Private keys are refused: the room needs
// the public half only, and must not hold the shop's signing key.
func ParseKeys(text string) (Static, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return nil, errors.New("no key")
	case len(text) > MaxPastedKeys:
		return nil, fmt.Errorf("the keys are over %d KiB", MaxPastedKeys>>10)
	case strings.HasPrefix(text, "{"):
		return parseJWKs([]byte(text))
	}
	var keys Static
	rest := []byte(text)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "PUBLIC KEY" {
			return nil, fmt.Errorf("a %s block: paste the public key (PUBLIC KEY) only", block.Type)
		}
		pub, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("a public key that does not read: %w", err)
		}
		k := jose.JSONWebKey{Key: pub}
		if !k.Valid() {
			return nil, errors.New("a public key of a kind the room does not take (RSA, ECDSA or Ed25519)")
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 || strings.TrimSpace(string(rest)) != "" {
		return nil, errors.New("not a PEM public key, a JWK or a JWK set")
	}
	return keys, nil
}

// parseJWKs reads a JWK or a JWK set of public keys.
func parseJWKs(b []byte) (Static, error) {
	var probe struct {
		Keys json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	var keys []jose.JSONWebKey
	if probe.Keys != nil {
		var set jose.JSONWebKeySet
		if err := json.Unmarshal(b, &set); err != nil {
			return nil, fmt.Errorf("a JWK set that does not read: %w", err)
		}
		keys = set.Keys
	} else {
		var k jose.JSONWebKey
		if err := json.Unmarshal(b, &k); err != nil {
			return nil, fmt.Errorf("a JWK that does not read: %w", err)
		}
		keys = []jose.JSONWebKey{k}
	}
	if len(keys) == 0 {
		return nil, errors.New("a JWK set without keys")
	}
	for _, k := range keys {
		if !k.Valid() || !k.IsPublic() {
			return nil, errors.New("a JWK that is not a public key: paste the public keys only")
		}
	}
	return keys, nil
}

// CheckJWKSURL checks a JWKS URL as a room's setting: https (http only to
// a loopback host, for a shop on the same machine), and never an
// address the server must not fetch (egress.CheckHost).
func CheckJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.User != nil || u.Fragment != "" {
		return errors.New("not an absolute URL")
	}
	host := u.Hostname()
	switch u.Scheme {
	case "https":
	case "http":
		if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return errors.New("the keys must come over https")
		}
	default:
		return errors.New("not an http(s) URL")
	}
	return egress.CheckHost(host)
}

// JWKS fetches and caches the shops' key sets by URL. A set is kept for
// MaxAge; a token whose kid the cached set lacks fetches it again, at
// most once per MinRefresh, so that a shop's new key is found at once
// while made-up kids cannot make the room fetch in a loop. A set that
// cannot be fetched again is used while it is younger than Stale.
type JWKS struct {
	Client                   *http.Client
	Now                      func() time.Time
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
func (j *JWKS) Source(url string) KeySource { return jwksSource{j, url} }

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
		return pick(e.keys, kid), nil
	}
	// Stale, or a kid the set lacks: fetch, unless a fetch was tried
	// lately.
	if !e.tried.IsZero() && now.Sub(e.tried) < j.MinRefresh {
		if usable {
			return pick(e.keys, kid), nil
		}
		return nil, fmt.Errorf("fetch %s: it failed less than %v ago", url, j.MinRefresh)
	}
	e.tried = now
	// The fetch is the room's, not the caller's: a buyer who gives up
	// must not leave the shop's keys unfetched for MinRefresh.
	keys, err := j.fetch(context.WithoutCancel(ctx), url)
	if err != nil {
		if usable {
			return pick(e.keys, kid), nil
		}
		return nil, err
	}
	e.keys, e.fetched = keys, now
	return pick(keys, kid), nil
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
	if err := CheckJWKSURL(url); err != nil {
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
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxJWKS+1))
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	if len(b) > MaxJWKS {
		return nil, fmt.Errorf("fetch %s: the key set is over %d KiB", url, MaxJWKS>>10)
	}
	keys, err := parseJWKs(b)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	return keys, nil
}
