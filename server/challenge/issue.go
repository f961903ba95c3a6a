package challenge

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	altcha "github.com/altcha-org/altcha-lib-go"
)

// TTL is how long a challenge can be solved and its solution used.
const TTL = 2 * time.Minute

// MaxPayloadLen bounds the base64 payload that Verify reads; a real one is
// about 400 bytes.
const MaxPayloadLen = 2048

// The salt's parameters.
const (
	paramRoom    = "room"
	paramExpires = "expires"
	// paramIssued is the issue time (unix ms): the enter refuses a proof
	// issued before the room's current phase began (banked).
	paramIssued = "iat"
	// paramVisitor is the visitor id that the solution creates or serves.
	paramVisitor = "v"
)

// Why Verify refuses a solution.
var (
	// ErrInvalid reports a payload that does not decode, is not signed by
	// this deployment, or does not solve its challenge.
	ErrInvalid = errors.New("challenge solution invalid")
	// ErrExpired reports a genuine solution past its expiry.
	ErrExpired = errors.New("challenge expired")
	// ErrOtherRoom reports a genuine solution of another room's challenge.
	ErrOtherRoom = errors.New("challenge of another room")
)

// Challenge is what a client solves (the ALTCHA widget's JSON).
type Challenge = altcha.Challenge

// Issue returns a challenge for visitor (the id its solution creates or
// serves) in room whose number is drawn uniformly in [0, maxNumber] (so
// that a solver needs maxNumber/2 hashes on average), issued at now and
// expiring TTL after.
func (k *Keys) Issue(room, visitor string, maxNumber int64, now time.Time) (Challenge, error) {
	if maxNumber < 1 {
		return Challenge{}, fmt.Errorf("challenge: issue %s: maxNumber %d", room, maxNumber)
	}
	exp := now.Add(TTL)
	c, err := altcha.CreateChallenge(altcha.ChallengeOptions{
		Algorithm: altcha.SHA256,
		MaxNumber: maxNumber,
		HMACKey:   k.challenge,
		Expires:   &exp,
		Params: url.Values{paramRoom: {room}, paramVisitor: {visitor},
			paramIssued: {strconv.FormatInt(now.UnixMilli(), 10)}},
	})
	if err != nil {
		return Challenge{}, fmt.Errorf("challenge: issue %s: %w", room, err)
	}
	return c, nil
}

// Proof is a verified solution: ID (the challenge's hash, hex) names it in
// the replay set until Expires; IssuedAt is when its challenge was issued
// and Visitor the visitor id it was issued for.
type Proof struct {
	ID       string
	Expires  time.Time
	IssuedAt time.Time
	Visitor  string
}

// Verify checks payload, the base64 of the ALTCHA JSON payload
// {algorithm, challenge, number, salt, signature}, as a solution of a
// challenge this deployment issued for room, unexpired at now. It returns
// ErrInvalid, ErrExpired or ErrOtherRoom (wrapped) when it is not. Verify
// does not know whether the solution was used before: the enter script
// does (see queue).
func (k *Keys) Verify(payload, room string, now time.Time) (Proof, error) {
	p, err := decode(payload)
	if err != nil {
		return Proof{}, fmt.Errorf("challenge: verify %s: %w", room, err)
	}
	ok, err := altcha.VerifySolutionSafe(p, k.challenge, false)
	if err != nil || !ok {
		return Proof{}, fmt.Errorf("challenge: verify %s: %w", room, ErrInvalid)
	}
	params := altcha.ExtractParams(p)
	exp, err := strconv.ParseInt(params.Get(paramExpires), 10, 64)
	iat, err2 := strconv.ParseInt(params.Get(paramIssued), 10, 64)
	if err != nil || err2 != nil || params.Get(paramVisitor) == "" { // signed by us, so never; but fail closed
		return Proof{}, fmt.Errorf("challenge: verify %s: %w", room, ErrInvalid)
	}
	expires := time.Unix(exp, 0)
	switch {
	case params.Get(paramRoom) != room:
		return Proof{}, fmt.Errorf("challenge: verify %s: %w", room, ErrOtherRoom)
	case !now.Before(expires):
		return Proof{}, fmt.Errorf("challenge: verify %s: %w", room, ErrExpired)
	}
	return Proof{ID: p.Challenge, Expires: expires, IssuedAt: time.UnixMilli(iat), Visitor: params.Get(paramVisitor)}, nil
}

// decode reads a payload, bounded, and accepts SHA-256 only (the library
// would let the client pick a cheaper hash).
func decode(payload string) (altcha.Payload, error) {
	if payload == "" || len(payload) > MaxPayloadLen {
		return altcha.Payload{}, ErrInvalid
	}
	b, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return altcha.Payload{}, ErrInvalid
	}
	var p altcha.Payload
	if err := json.Unmarshal(b, &p); err != nil || p.Algorithm != string(altcha.SHA256) || len(p.Challenge) != 64 {
		return altcha.Payload{}, ErrInvalid
	}
	return p, nil
}
