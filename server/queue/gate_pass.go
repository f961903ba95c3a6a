package queue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/token"
)

// GATE (issue 13): a READY pass handed to an outside shop as a signed pass
// (a JWS whose jti this package records), redeemed there once into a
// session that holds the pass's slot.

// Errors of the gate's passes and sessions.
var (
	// ErrPassUnknown reports a pass id (jti) that was never minted, whose
	// pass expired or was given up, or that a newer mint replaced.
	ErrPassUnknown = errors.New("pass unknown or expired")
	// ErrSessionGone reports a session that ended, went idle or never was.
	ErrSessionGone = errors.New("session gone")
)

// RedeemClaimTTL bounds the claim that a redeem holds between its two
// scripts.
const RedeemClaimTTL = 10 * time.Second

// validID reports whether id can name a pass or a session: 16 to 64
// characters of the URL-safe base64 alphabet (16 random bytes are 22).
func validID(id string) bool {
	if len(id) < 16 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Subject returns the pass's and session's subject for visitor in
// namespace ns: the first 32 hex characters of SHA-256(ns + ":" + visitor),
// which names the buyer to the shop without giving away their id.
func Subject(ns, visitor string) string {
	sum := sha256.Sum256([]byte(ns + ":" + visitor))
	return hex.EncodeToString(sum[:16])
}

// MintPass checks that visitor holds the live READY pass tok, and records
// jti → (visitor, tok) until the pass's expiry, replacing this visitor's
// previous jti (one live jti per pass). It returns the pass's expiry (the
// JWS exp). It returns ErrTokenInvalid for a malformed, unknown, expired
// or foreign pass (or a jti minted for another visitor), ErrTokenUsed for
// a pass already used (by an order or a redeem), and a *WaitError wrapping
// ErrTokenInUse while an attempt claims it.
func (e *Engine) MintPass(ctx context.Context, roomName, visitor, tok, jti string) (time.Time, error) {
	if !token.Valid(tok) || !validID(jti) {
		return time.Time{}, ErrTokenInvalid
	}
	res, err := e.run(ctx, e.s.mint, roomName, visitor, tok, jti).Int64Slice()
	if err != nil {
		return time.Time{}, fmt.Errorf("queue: mint pass in %s: %w", roomName, err)
	}
	if len(res) != 2 {
		return time.Time{}, fmt.Errorf("queue: mint pass in %s: unexpected reply %v", roomName, res)
	}
	switch res[0] {
	case 1:
		return time.UnixMilli(res[1]), nil
	case -2:
		return time.Time{}, &WaitError{Err: ErrTokenInUse, RetryAfter: time.Duration(res[1]) * time.Millisecond}
	case -5:
		return time.Time{}, ErrTokenUsed
	default:
		return time.Time{}, ErrTokenInvalid
	}
}

// Session is a live session opened by a redeemed pass: it holds one of
// the room's maxActive slots until it ends.
type Session struct {
	ID      string
	Room    string
	Subject string
	Started time.Time
	// Expires is when the session ends unless renewed (idle mode) or
	// ended sooner.
	Expires time.Time
	// Mode is room.SessionIdle or room.SessionFixed, IdleSeconds the
	// room's sessionSeconds.
	Mode        string
	IdleSeconds int
}

// Redeem turns the pass jti into the session sessionID: Claim (the order
// path's claim, fenced by a holder id), then a consume that, in one
// script, moves the pass's active slot to the session. Of concurrent
// redeems of one jti, on any instances, at most one succeeds. It returns
// ErrPassUnknown for an unknown jti (or an expired pass); ErrTokenUsed
// for a pass already redeemed (or used by an order); a *WaitError
// wrapping ErrTokenInUse while another redeem (or order) holds its claim.
func (e *Engine) Redeem(ctx context.Context, roomName, jti, sessionID string) (Session, error) {
	if !validID(sessionID) {
		return Session{}, fmt.Errorf("queue: redeem pass in %s: invalid session id", roomName)
	}
	if !validID(jti) {
		return Session{}, ErrPassUnknown
	}
	rec, err := e.rdb.HGet(ctx, roomKeys(e.ns, roomName).key("jtis"), jti).Result()
	if errors.Is(err, redis.Nil) {
		return Session{}, ErrPassUnknown
	}
	if err != nil {
		return Session{}, fmt.Errorf("queue: redeem pass in %s: %w", roomName, err)
	}
	visitor, tok, ok := strings.Cut(rec, " ")
	if !ok {
		return Session{}, ErrPassUnknown
	}
	c, err := e.Claim(ctx, roomName, visitor, tok, RedeemClaimTTL)
	if errors.Is(err, ErrTokenInvalid) {
		return Session{}, ErrPassUnknown
	}
	if err != nil {
		return Session{}, err
	}
	sub := Subject(e.ns, visitor)
	res, err := e.run(ctx, e.s.openSession, roomName, visitor, c.Holder, jti, sessionID, sub).Slice()
	if err != nil {
		// Best effort: the claim would lapse by itself after RedeemClaimTTL.
		_ = e.Release(context.WithoutCancel(ctx), roomName, visitor, c.Holder, 0)
		return Session{}, fmt.Errorf("queue: redeem pass in %s: %w", roomName, err)
	}
	if len(res) == 0 {
		return Session{}, fmt.Errorf("queue: redeem pass in %s: empty reply", roomName)
	}
	switch code := asInt(res[0]); {
	case code == 1 && len(res) == 5:
		return Session{ID: sessionID, Room: roomName, Subject: sub, Started: time.UnixMilli(asInt(res[1])),
			Expires: time.UnixMilli(asInt(res[2])), IdleSeconds: int(asInt(res[3])), Mode: asString(res[4])}, nil
	case code == 0:
		return Session{}, ErrPassUnknown
	case code == -6:
		return Session{}, fmt.Errorf("queue: redeem pass in %s: session id taken", roomName)
	default:
		return Session{}, fmt.Errorf("queue: redeem pass in %s: lost the claim", roomName)
	}
}
