package queue

import (
	"context"
	"fmt"
	"time"

	"waitingroom/server/token"
)

// DefaultClaimTTL is how long a claim holds a token before it counts as
// READY again (its holder is presumed to have crashed).
const DefaultClaimTTL = 30 * time.Second

// Claim moves visitor's token from READY to CLAIMED for one order attempt.
// A malformed token is rejected without a Redis round trip. It returns
// ErrTokenInvalid for a malformed, unknown, expired or foreign token, and
// ErrTokenInUse when another attempt holds the claim.
func (e *Engine) Claim(ctx context.Context, roomName, visitor, tok string, ttl time.Duration) error {
	if !token.Valid(tok) {
		return ErrTokenInvalid
	}
	if ttl <= 0 {
		ttl = DefaultClaimTTL
	}
	n, err := e.run(ctx, e.s.claim, roomName, visitor, tok, ttl.Milliseconds()).Int64()
	if err != nil {
		return fmt.Errorf("queue: claim token in %s: %w", roomName, err)
	}
	switch n {
	case 1:
		return nil
	case -2:
		return ErrTokenInUse
	default:
		return ErrTokenInvalid
	}
}

// Release moves a claimed token back to READY after an order attempt rolled
// back, so that the buyer can retry. It returns ErrTokenInvalid for an
// unknown or foreign token and ErrTokenNotClaimed when it is not claimed.
func (e *Engine) Release(ctx context.Context, roomName, visitor, tok string) error {
	if !token.Valid(tok) {
		return ErrTokenInvalid
	}
	n, err := e.run(ctx, e.s.release, roomName, visitor, tok).Int64()
	if err != nil {
		return fmt.Errorf("queue: release token in %s: %w", roomName, err)
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

// Consume deletes visitor's token after their order committed and frees the
// active slot. It returns ErrTokenInvalid when the token is unknown, expired
// or foreign.
func (e *Engine) Consume(ctx context.Context, roomName, visitor, tok string) error {
	if !token.Valid(tok) {
		return ErrTokenInvalid
	}
	n, err := e.run(ctx, e.s.consume, roomName, visitor, tok).Int64()
	if err != nil {
		return fmt.Errorf("queue: consume token in %s: %w", roomName, err)
	}
	if n != 1 {
		return ErrTokenInvalid
	}
	return nil
}
