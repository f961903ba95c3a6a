package identity

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/go-jose/go-jose/v4"

	"waitingroom/server/egress"
)

// MaxPastedKeys bounds the text of pasted keys, and MaxJWKS a fetched key
// set.
const (
	MaxPastedKeys = 64 << 10
	MaxJWKS       = 64 << 10
)

// Pick returns every key of keys when kid is empty, else the keys of kid
// and those without a kid (a pasted PEM key has none).
func Pick(keys []jose.JSONWebKey, kid string) []jose.JSONWebKey { return pick(keys, kid) }

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
		return ParseJWKS([]byte(text))
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

// ParseJWKS reads a JWK or a JWK set of public keys, as pasted or as a
// shop's JWKS URL serves it.
func ParseJWKS(b []byte) (Static, error) {
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
