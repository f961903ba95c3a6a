// Package identitytest signs identities as a shop would, for tests of the
// rooms that take them.
package identitytest

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Key is a shop's signing key and its public JWK.
type Key struct {
	priv any
	alg  jose.SignatureAlgorithm
	// Public is the key's public JWK.
	Public jose.JSONWebKey
}

// NewKey returns a fresh key of kind "ec" (ES256), "rsa" (RS256) or "ed"
// (EdDSA), named kid ("" for none).
func NewKey(t testing.TB, kind, kid string) Key {
	t.Helper()
	var priv, pub any
	var alg jose.SignatureAlgorithm
	var err error
	switch kind {
	case "ec":
		var k *ecdsa.PrivateKey
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err == nil {
			priv, pub, alg = k, &k.PublicKey, jose.ES256
		}
	case "rsa":
		var k *rsa.PrivateKey
		k, err = rsa.GenerateKey(rand.Reader, 2048)
		if err == nil {
			priv, pub, alg = k, &k.PublicKey, jose.RS256
		}
	case "ed":
		var p ed25519.PublicKey
		var k ed25519.PrivateKey
		p, k, err = ed25519.GenerateKey(rand.Reader)
		priv, pub, alg = k, p, jose.EdDSA
	default:
		t.Fatalf("identitytest: no key kind %q", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	return Key{priv: priv, alg: alg, Public: jose.JSONWebKey{Key: pub, KeyID: kid, Algorithm: string(alg), Use: "sig"}}
}

// Private returns the private key, for tests that must sign what Sign
// does not (a token of another form).
func (k Key) Private() (any, jose.SignatureAlgorithm) { return k.priv, k.alg }

// PEM returns the public key as a PEM block, as an operator pastes it.
func (k Key) PEM(t testing.TB) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k.Public.Key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// JWKS returns a JWK set of the public keys of keys, as a shop serves it.
func JWKS(t testing.TB, keys ...Key) []byte {
	t.Helper()
	set := jose.JSONWebKeySet{}
	for _, k := range keys {
		set.Keys = append(set.Keys, k.Public)
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Sign returns a JWT of claims signed by k, with k's kid in its header.
func (k Key) Sign(t testing.TB, claims any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if k.Public.KeyID != "" {
		opts = opts.WithHeader("kid", k.Public.KeyID)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: k.priv}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Claims are an identity's claims: the registered ones, and the line.
type Claims struct {
	jwt.Claims
	Line string `json:"line,omitempty"`
}

// For returns the claims of buyer sub in room, valid from now for ttl.
func For(room, sub string, now time.Time, ttl time.Duration) Claims {
	return Claims{Claims: jwt.Claims{Subject: sub, Audience: jwt.Audience{room},
		Expiry: jwt.NewNumericDate(now.Add(ttl)), IssuedAt: jwt.NewNumericDate(now)}}
}
