// Package identity verifies the signed identities that a shop gives its
// buyers: a JWT the shop signs with a key it keeps, naming the buyer
// (sub) and the room (aud), with an expiry (exp) and optionally a line. A
// room trusts the shop's keys as a JWKS URL, or as keys its operator
// pasted.
package identity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"waitingroom/server/line"
)

// Algorithms are the signatures a shop may use: RSA, ECDSA and Ed25519.
// HMAC is not among them: a room that can verify an HMAC could also sign
// one, and the room is not the shop.
var Algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// Leeway is the clock difference tolerated between the shop and the room
// for exp, nbf and iat.
const Leeway = time.Minute

// MaxTokenLen bounds a token, and MaxSubjectLen its subject.
const (
	MaxTokenLen   = 8 << 10
	MaxSubjectLen = 256
)

// The refusals of an identity, each a reason the buyer is told.
var (
	ErrMalformed   = errors.New("identity: not a signed token")
	ErrSignature   = errors.New("identity: not signed by the shop's keys")
	ErrExpired     = errors.New("identity: expired")
	ErrNotYetValid = errors.New("identity: not valid yet")
	ErrWrongRoom   = errors.New("identity: for another room")
	ErrNoSubject   = errors.New("identity: names no buyer")
	ErrNoExpiry    = errors.New("identity: has no expiry")
)

// Claims are what a verified identity says.
type Claims struct {
	// Subject is the shop's id of the buyer (sub).
	Subject string
	// Line is the line the shop puts the buyer in ("" for none).
	Line string
	// Expiry is when the token stops being accepted (exp).
	Expiry time.Time
}

// KeySource finds the public keys that may have signed a token: those of
// kid, or every key when kid is empty.
type KeySource interface {
	Keys(ctx context.Context, kid string) ([]jose.JSONWebKey, error)
}

// Verify checks token for room at now: signed by a key of keys with one of
// Algorithms, for room (aud), within its validity (exp, nbf, with
// Leeway), naming a buyer (sub, at most MaxSubjectLen bytes). It returns
// one of the refusals above, or the key source's error when the keys
// could not be had.
func Verify(ctx context.Context, token, room string, keys KeySource, now time.Time) (Claims, error) {
	if len(token) > MaxTokenLen {
		return Claims{}, ErrMalformed
	}
	tok, err := jwt.ParseSigned(token, Algorithms)
	if err != nil || len(tok.Headers) != 1 {
		return Claims{}, ErrMalformed
	}
	candidates, err := keys.Keys(ctx, tok.Headers[0].KeyID)
	if err != nil {
		return Claims{}, fmt.Errorf("identity: the shop's keys: %w", err)
	}
	var std jwt.Claims
	var extra struct {
		Line string `json:"line"`
	}
	verified := false
	for _, k := range candidates {
		if tok.Claims(k.Key, &std, &extra) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return Claims{}, ErrSignature
	}
	err = std.ValidateWithLeeway(jwt.Expected{AnyAudience: jwt.Audience{room}, Time: now}, Leeway)
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return Claims{}, ErrExpired
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return Claims{}, ErrNotYetValid
	case errors.Is(err, jwt.ErrInvalidAudience):
		return Claims{}, ErrWrongRoom
	case err != nil:
		return Claims{}, ErrMalformed
	case std.Expiry == nil:
		return Claims{}, ErrNoExpiry
	case std.Subject == "" || len(std.Subject) > MaxSubjectLen:
		return Claims{}, ErrNoSubject
	case !line.ValidName(extra.Line):
		return Claims{}, ErrMalformed
	}
	return Claims{Subject: std.Subject, Line: extra.Line, Expiry: std.Expiry.Time()}, nil
}

// Refused reports whether err is one of the refusals of a token (rather
// than a failure to get the keys).
func Refused(err error) bool {
	for _, r := range []error{ErrMalformed, ErrSignature, ErrExpired, ErrNotYetValid, ErrWrongRoom, ErrNoSubject, ErrNoExpiry} {
		if errors.Is(err, r) {
			return true
		}
	}
	return false
}
