package queue

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"waitingroom/server/token"
)

// DefaultClaimTTL is how long a claim holds a token before it counts as
// READY again (its holder is presumed to have crashed).
const DefaultClaimTTL = 30 * time.Second

// MaxFailedAttempts is how many failed order attempts a token may have
// before it is paused (see Release).
const MaxFailedAttempts = 5

// Claim is a held claim on an entry token.
type Claim struct {
	// Holder fences the claim: Release and Consume act only for it, so a
	// late release of an older, timed-out claim cannot undo a newer one.
	Holder string
	// TTL is how long the claim holds: the asked length, cut to the pass's
	// remaining life. An attempt must be over by then.
	TTL time.Duration
}

// newHolder returns a fresh random holder id.
func newHolder() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// Claim moves visitor's token from READY to CLAIMED for one order attempt
// of at most ttl (0: DefaultClaimTTL), never past the pass's expiry, and
// returns the claim. A malformed token is rejected without a Redis round
// trip. It returns ErrTokenInvalid for a malformed, unknown, expired or
// foreign token; ErrTokenUsed for a token that placed its order; and a
// *WaitError wrapping ErrTokenInUse (another attempt holds the claim) or
// ErrTokenPaused (too many failed attempts) with the time until a retry can
// succeed.
func (e *Engine) Claim(ctx context.Context, roomName, visitor, tok string, ttl time.Duration) (Claim, error) {
	if !token.Valid(tok) {
		return Claim{}, ErrTokenInvalid
	}
	if ttl <= 0 {
		ttl = DefaultClaimTTL
	}
	holder, err := newHolder()
	if err != nil {
		return Claim{}, fmt.Errorf("queue: claim token in %s: %w", roomName, err)
	}
	res, err := e.run(ctx, e.s.claim, roomName, visitor, tok, ttl.Milliseconds(), holder).Int64Slice()
	if err != nil {
		return Claim{}, fmt.Errorf("queue: claim token in %s: %w", roomName, err)
	}
	if len(res) != 2 {
		return Claim{}, fmt.Errorf("queue: claim token in %s: unexpected reply %v", roomName, res)
	}
	ms := time.Duration(res[1]) * time.Millisecond
	switch res[0] {
	case 1:
		return Claim{Holder: holder, TTL: ms}, nil
	case -2:
		return Claim{}, &WaitError{Err: ErrTokenInUse, RetryAfter: ms}
	case -4:
		return Claim{}, &WaitError{Err: ErrTokenPaused, RetryAfter: ms}
	case -5:
		return Claim{}, ErrTokenUsed
	default:
		return Claim{}, ErrTokenInvalid
	}
}

// Release moves a claimed token back to READY after an order attempt
// rolled back, so that the buyer can retry; only the claim's holder may. A
// pause above 0 counts the attempt as failed (an invalid order): the
// MaxFailedAttempts-th failure pauses the token for pause, and Release then
// returns a *WaitError wrapping ErrTokenPaused (the token is released all
// the same). It returns ErrTokenNotClaimed when holder does not hold the
// claim (a newer claim took it over) and ErrTokenInvalid when the pass is
// gone or expired.
func (e *Engine) Release(ctx context.Context, roomName, visitor, holder string, pause time.Duration) error {
	n, err := e.run(ctx, e.s.release, roomName, visitor, holder, max(pause, 0).Milliseconds(), MaxFailedAttempts).Int64()
	if err != nil {
		return fmt.Errorf("queue: release token in %s: %w", roomName, err)
	}
	switch n {
	case 1:
		return nil
	case 2:
		return &WaitError{Err: ErrTokenPaused, RetryAfter: pause}
	case -3:
		return ErrTokenNotClaimed
	default:
		return ErrTokenInvalid
	}
}

// Consume ends visitor's pass after their order committed and frees its
// slot; only the claim's holder may. The token is kept as used until the
// room's token TTL, so that a replay is told so. It returns
// ErrTokenNotClaimed when holder does not hold the claim and
// ErrTokenInvalid when the pass is gone.
func (e *Engine) Consume(ctx context.Context, roomName, visitor, holder string) error {
	n, err := e.run(ctx, e.s.consume, roomName, visitor, holder).Int64()
	if err != nil {
		return fmt.Errorf("queue: consume token in %s: %w", roomName, err)
	}
	switch n {
	case 1:
		return nil
	case -3:
		return ErrTokenNotClaimed
	default:
		return ErrTokenInvalid
	}
}
