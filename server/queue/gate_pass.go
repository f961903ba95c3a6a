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

// GATE: a READY pass handed to an outside shop as a signed pass
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
// redeems of one jti, on any instances, at most one opens a session.
//
// A redeem is idempotent for its session id: when jti already opened the
// live session sessionID, Redeem returns that session again (the caller's
// retry after a timeout that hid the first answer); a redeem with any
// other session id gets ErrTokenUsed. A redeem that finds the pass claimed
// by another attempt waits up to RedeemWait for it to finish, so that a
// retry racing its first attempt still gets the session.
//
// It returns ErrPassUnknown for an unknown jti (or a pass that expired, or
// whose claim lapsed, before the session opened); ErrTokenUsed for a pass
// already redeemed into another (or an ended) session, or used by an
// order; a *WaitError wrapping ErrTokenInUse while another redeem (or
// order) holds its claim past RedeemWait, or when this redeem lost its
// claim or sessionID names another live session.
func (e *Engine) Redeem(ctx context.Context, roomName, jti, sessionID string) (Session, error) {
	if !validID(sessionID) {
		return Session{}, fmt.Errorf("queue: redeem pass in %s: invalid session id", roomName)
	}
	if !validID(jti) {
		return Session{}, ErrPassUnknown
	}
	deadline := time.Now().Add(RedeemWait)
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		s, claimed, err := e.redeemOnce(ctx, roomName, jti, sessionID)
		if !claimed || time.Now().Add(pause).After(deadline) {
			return s, err
		}
		select {
		case <-ctx.Done():
			return s, err
		case <-time.After(pause):
		}
	}
}

// RedeemWait bounds how long a redeem waits for another attempt's claim on
// its pass (a claim lasts two script calls, unless its holder stalled).
const RedeemWait = time.Second

// redeemOnce is one attempt of Redeem; claimed reports that another
// attempt held the pass's claim (err is then a *WaitError).
func (e *Engine) redeemOnce(ctx context.Context, roomName, jti, sessionID string) (s Session, claimed bool, err error) {
	rec, err := e.rdb.HGet(ctx, roomKeys(e.ns, roomName).key("jtis"), jti).Result()
	if errors.Is(err, redis.Nil) {
		return Session{}, false, ErrPassUnknown
	}
	if err != nil {
		return Session{}, false, fmt.Errorf("queue: redeem pass in %s: %w", roomName, err)
	}
	visitor, tok, ok := strings.Cut(rec, " ")
	if !ok {
		return Session{}, false, ErrPassUnknown
	}
	c, err := e.Claim(ctx, roomName, visitor, tok, RedeemClaimTTL)
	switch {
	case errors.Is(err, ErrTokenInvalid):
		return Session{}, false, ErrPassUnknown
	case errors.Is(err, ErrTokenUsed):
		s, err := e.redeemedInto(ctx, roomName, jti, sessionID)
		return s, false, err
	case errors.Is(err, ErrTokenInUse):
		return Session{}, true, err
	case err != nil:
		return Session{}, false, err
	}
	sub := Subject(e.ns, visitor)
	res, err := e.run(ctx, e.s.openSession, roomName, visitor, c.Holder, jti, sessionID, sub).Slice()
	if err != nil {
		// Best effort: the claim would lapse by itself after RedeemClaimTTL.
		_ = e.Release(context.WithoutCancel(ctx), roomName, visitor, c.Holder, 0)
		return Session{}, false, fmt.Errorf("queue: redeem pass in %s: %w", roomName, err)
	}
	if len(res) == 0 {
		return Session{}, false, fmt.Errorf("queue: redeem pass in %s: empty reply", roomName)
	}
	switch code := asInt(res[0]); {
	case code == 1 && len(res) == 5:
		return Session{ID: sessionID, Room: roomName, Subject: sub, Started: time.UnixMilli(asInt(res[1])),
			Expires: time.UnixMilli(asInt(res[2])), IdleSeconds: int(asInt(res[3])), Mode: asString(res[4])}, false, nil
	case code == 0:
		return Session{}, false, ErrPassUnknown
	case code == -6 || code == -3:
		// -6: the session id names another live session, and the pass is
		// released; -3: this redeem's claim lapsed and the pass moved on
		// meanwhile. Either way another attempt decides: answered as "in use".
		return Session{}, false, &WaitError{Err: ErrTokenInUse, RetryAfter: time.Second}
	default:
		return Session{}, false, fmt.Errorf("queue: redeem pass in %s: unexpected reply %d", roomName, code)
	}
}

// redeemedInto returns the live session sessionID if the used pass jti
// opened it (a retry of that redeem), and ErrTokenUsed otherwise: the pass
// went to another session, to one that ended, or to an order. It does not
// renew the session.
func (e *Engine) redeemedInto(ctx context.Context, roomName, jti, sessionID string) (Session, error) {
	res, err := e.run(ctx, e.s.touchSession, roomName, sessionID, flag(false), jti).Slice()
	if err != nil {
		return Session{}, fmt.Errorf("queue: redeem pass in %s: %w", roomName, err)
	}
	s, ok := touched(roomName, sessionID, res)
	if !ok {
		return Session{}, ErrTokenUsed
	}
	return s, nil
}
