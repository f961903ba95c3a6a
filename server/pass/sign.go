package pass

import (
	"errors"
	"fmt"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Leeway is the clock skew allowed on exp and iat.
const Leeway = 5 * time.Second

// MaxLen bounds the length of a compact pass that Verify parses.
const MaxLen = 4096

// ErrInvalid is wrapped by every error of Verify: a bad signature, an
// unknown key, an expired pass or a missing claim.
var ErrInvalid = errors.New("pass: invalid")

// ErrOff is the answer of a server without pass keys: gate mode is off
// there, and it signs no pass.
var ErrOff = errors.New("pass: gate mode is off on this server")

// ErrUnknownKey is the error of Verify for a pass whose kid is neither the
// current nor the previous key's (it wraps ErrInvalid): a pass signed
// before two rotations, or a forgery; a caller may tell the buyer to go
// back to the room rather than that the pass is foreign.
var ErrUnknownKey = fmt.Errorf("%w: unknown kid", ErrInvalid)

// Claims are the claims of a pass. Their JSON names are room, sub, jti,
// aud, iss, iat and exp; aud is a single string.
type Claims struct {
	Room     string    // the room's name
	Subject  string    // a hash of the visitor
	ID       string    // jti: the single-use id the redeem consumes
	Audience string    // the shop's origin
	Issuer   string    // the waiting room's public origin
	IssuedAt time.Time // iat
	Expiry   time.Time // exp: the pass's expiry
}

// wire is the JSON form of Claims.
type wire struct {
	jwt.Claims
	Room string `json:"room,omitempty"`
}

// Sign returns c as a compact JWS signed by the current key, with the kid
// header. Room, ID, Audience and Expiry are required.
func (k *Keys) Sign(c Claims) (string, error) {
	switch {
	case c.Room == "":
		return "", errors.New("pass: sign: no room")
	case c.ID == "":
		return "", errors.New("pass: sign: no jti")
	case c.Audience == "":
		return "", errors.New("pass: sign: no audience")
	case c.Expiry.IsZero():
		return "", errors.New("pass: sign: no expiry")
	}
	w := wire{Room: c.Room, Claims: jwt.Claims{
		Subject:  c.Subject,
		ID:       c.ID,
		Audience: jwt.Audience{c.Audience},
		Issuer:   c.Issuer,
		Expiry:   jwt.NewNumericDate(c.Expiry),
	}}
	if !c.IssuedAt.IsZero() {
		w.IssuedAt = jwt.NewNumericDate(c.IssuedAt)
	}
	s, err := jwt.Signed(k.signer).Claims(w).Serialize()
	if err != nil {
		return "", fmt.Errorf("pass: sign: %w", err)
	}
	return s, nil
}

// Verify checks a compact pass: alg EdDSA only (never "none" or an HMAC
// alg), a kid of the current or previous key, a valid signature, exp not
// past and iat not in the future (each with Leeway at now), and present
// jti, room, aud and exp claims. It does not check which room or audience
// the pass is for: the caller compares Claims.Room and Claims.Audience.
// Every error wraps ErrInvalid.
func (k *Keys) Verify(compact string, now time.Time) (Claims, error) {
	if len(compact) > MaxLen {
		return Claims{}, fmt.Errorf("%w: longer than %d bytes", ErrInvalid, MaxLen)
	}
	tok, err := jwt.ParseSigned(compact, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return Claims{}, fmt.Errorf("%w: parse: %v", ErrInvalid, err)
	}
	if len(tok.Headers) != 1 || tok.Headers[0].KeyID == "" {
		return Claims{}, fmt.Errorf("%w: no kid", ErrInvalid)
	}
	keys := k.set.Key(tok.Headers[0].KeyID)
	if len(keys) == 0 {
		return Claims{}, ErrUnknownKey
	}
	var w wire
	if err := tok.Claims(keys[0].Key, &w); err != nil {
		return Claims{}, fmt.Errorf("%w: signature: %v", ErrInvalid, err)
	}
	switch {
	case w.Expiry == nil:
		return Claims{}, fmt.Errorf("%w: no exp", ErrInvalid)
	case w.ID == "":
		return Claims{}, fmt.Errorf("%w: no jti", ErrInvalid)
	case w.Room == "":
		return Claims{}, fmt.Errorf("%w: no room", ErrInvalid)
	case len(w.Audience) != 1 || w.Audience[0] == "":
		return Claims{}, fmt.Errorf("%w: want exactly one aud", ErrInvalid)
	}
	if err := w.ValidateWithLeeway(jwt.Expected{Time: now}, Leeway); err != nil {
		return Claims{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	c := Claims{
		Room:     w.Room,
		Subject:  w.Subject,
		ID:       w.ID,
		Audience: w.Audience[0],
		Issuer:   w.Issuer,
		Expiry:   w.Expiry.Time(),
	}
	if w.IssuedAt != nil {
		c.IssuedAt = w.IssuedAt.Time()
	}
	return c, nil
}

// UnverifiedRoom returns the room claim of compact without checking its
// signature or anything else ("" when it has none, or does not parse).
// Use it only to offer a way back to a room of this site, for a pass that
// Verify refused with ErrUnknownKey; never to trust the pass.
func UnverifiedRoom(compact string) string {
	if len(compact) > MaxLen {
		return ""
	}
	tok, err := jwt.ParseSigned(compact, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		return ""
	}
	var w wire
	if err := tok.UnsafeClaimsWithoutVerification(&w); err != nil {
		return ""
	}
	return w.Room
}
