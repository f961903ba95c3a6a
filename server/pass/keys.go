// Package pass signs and verifies the passes that send a buyer from the
// waiting room on to an outside shop: compact JWS tokens signed with Ed25519
// (alg EdDSA), and the JWKS that lets a shop check them offline.
//
// Keys come from PKCS#8 PEM files, as `openssl genpkey -algorithm ed25519`
// writes them, or are derived from the deployment's secret. A previous key
// can be kept for rotation: passes it signed still verify, and the JWKS lists
// it beside the current one.
package pass

import (
	"crypto"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/crypto/hkdf"
)

// deriveInfo is the HKDF info string of Derive; changing it changes every
// derived key.
const deriveInfo = "waitingroom pass key v1"

// Keys holds the current signing key and the set of keys that verify passes
// (the current one and, during a rotation, the previous one). It is safe for
// concurrent use.
type Keys struct {
	signer jose.Signer
	kid    string
	set    jose.JSONWebKeySet
	jwks   []byte
}

// Derive makes Keys from the deployment's secret, for when no signing key
// file is configured: the Ed25519 seed is HKDF-SHA256(secret) with the info
// "waitingroom pass key v1". Every instance that shares the secret signs
// with the same key.
func Derive(secret []byte) (*Keys, error) {
	if len(secret) == 0 {
		return nil, errors.New("pass: derive: empty secret")
	}
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(hkdf.New(sha256.New, secret, nil, []byte(deriveInfo)), seed); err != nil {
		return nil, fmt.Errorf("pass: derive: %w", err)
	}
	return newKeys(ed25519.NewKeyFromSeed(seed), nil)
}

// newKeys builds Keys signing with current and also verifying with
// previous (nil when there is none).
func newKeys(current ed25519.PrivateKey, previous ed25519.PublicKey) (*Keys, error) {
	pub := current.Public().(ed25519.PublicKey)
	kid, err := thumbprint(pub)
	if err != nil {
		return nil, err
	}
	k := &Keys{kid: kid}
	k.set.Keys = append(k.set.Keys, publicJWK(pub, kid))
	if previous != nil && !previous.Equal(pub) {
		pkid, err := thumbprint(previous)
		if err != nil {
			return nil, err
		}
		k.set.Keys = append(k.set.Keys, publicJWK(previous, pkid))
	}
	k.signer, err = jose.NewSigner(
		jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: current, KeyID: kid, Algorithm: string(jose.EdDSA)}},
		(&jose.SignerOptions{}).WithType("JWT"),
	)
	if err != nil {
		return nil, fmt.Errorf("pass: new signer: %w", err)
	}
	k.jwks, err = json.Marshal(k.set)
	if err != nil {
		return nil, fmt.Errorf("pass: marshal jwks: %w", err)
	}
	return k, nil
}

// thumbprint is the key's RFC 7638 SHA-256 thumbprint, unpadded base64url:
// the kid of the key.
func thumbprint(pub ed25519.PublicKey) (string, error) {
	jwk := jose.JSONWebKey{Key: pub}
	sum, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("pass: thumbprint: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(sum), nil
}

func publicJWK(pub ed25519.PublicKey, kid string) jose.JSONWebKey {
	return jose.JSONWebKey{Key: pub, KeyID: kid, Algorithm: string(jose.EdDSA), Use: "sig"}
}

// JWKS returns the JSON Web Key Set of the verifying keys,
// {"keys":[current, previous]}: public OKP Ed25519 keys with kid, alg EdDSA
// and use sig. The caller must not modify the returned slice.
func (k *Keys) JWKS() []byte { return k.jwks }

// KeyID returns the kid of the current signing key.
func (k *Keys) KeyID() string { return k.kid }
