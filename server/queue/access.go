package queue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Errors of an enter into a room whose access is limited (room.Access).
var (
	// ErrCodeRequired reports an enter that would create a new place in a
	// room whose access takes a code, without one redeemed for it.
	ErrCodeRequired = errors.New("an access code is required to join")
	// ErrCodeAsked reports an enter that would create a new place in a
	// line open to all of a room that has a code line: a code, if the
	// visitor has one, would choose their line. The caller enters again
	// with the code redeemed, or with Credentials.NoCode.
	ErrCodeAsked = errors.New("an access code, if any, chooses the line")
	// ErrIdentityRequired reports an enter that would create a new place
	// in a room that requires an identity, without a verified one.
	ErrIdentityRequired = errors.New("a signed-in identity is required to join")
)

// Credentials are what an enter brings to a room whose access is
// limited: an access code the caller redeemed for this enter, and a
// verified identity whose visitor the enter is for. The zero value is
// none.
type Credentials struct {
	Code, Identity bool
	// NoCode: the visitor has no access code to redeem. In a room with a
	// code line, a new place goes to a line open to all only with it;
	// without it the enter answers ErrCodeAsked.
	NoCode bool
	// Line is the line the visitor's code or identity names ("" for
	// none): a new place goes there when the credentials open it.
	Line string
}

// EnterWith is EnterWithProof with credentials: in a room whose access
// takes a code, an enter that would create a new place returns
// ErrCodeRequired unless cred.Code; in one that requires an identity,
// ErrIdentityRequired unless cred.Identity. They are checked before the
// proof of work. A visitor who has a place needs neither.
func (e *Engine) EnterWith(ctx context.Context, roomName, visitor, network string, c Campaign, proof Proof, cred Credentials) (Position, error) {
	return e.enter(ctx, roomName, placeReq{visitor: visitor, enter: true, network: network, c: c.Counted(), proof: proof, cred: cred})
}

// Guesses bounds the access codes refused to one client network across
// every room and instance: at most GuessBudget in a window of
// GuessWindow of the engine's clock. An access code that one guess could
// test in every room is throttled like a password.
const (
	GuessBudget = 20
	GuessWindow = time.Hour
)

// GuessError refuses a guess over the budget; RetryAfter is when the
// network's window ends.
type GuessError struct{ RetryAfter time.Duration }

func (e *GuessError) Error() string {
	return "too many refused access codes from this network; retry in " + e.RetryAfter.Round(time.Second).String()
}

// guessKey is network's count of guesses in window w.
func (e *Engine) guessKey(network string, w int64) string {
	return e.ns + ":guesses:" + strconv.FormatInt(w, 10) + ":" + network
}

// Guess is one guess TakeGuess counted, to forgive.
type Guess struct{ key string }

// TakeGuess counts one guess of an access code by network in the current
// window, and refuses it (*GuessError) when the window's guesses are
// spent. The caller gives it back with ForgiveGuess when the code was
// right, so that only refused codes count.
func (e *Engine) TakeGuess(ctx context.Context, network string) (Guess, error) {
	now := e.wallNow()
	w := now.UnixMilli() / GuessWindow.Milliseconds()
	key := e.guessKey(network, w)
	p := e.rdb.TxPipeline()
	n := p.Incr(ctx, key)
	p.PExpire(ctx, key, 2*GuessWindow)
	if _, err := p.Exec(ctx); err != nil {
		return Guess{}, fmt.Errorf("queue: take a guess: %w", err)
	}
	if n.Val() > GuessBudget {
		end := time.UnixMilli((w + 1) * GuessWindow.Milliseconds())
		return Guess{}, &GuessError{RetryAfter: max(end.Sub(now), time.Second)}
	}
	return Guess{key: key}, nil
}

// ForgiveGuess gives back guess g.
func (e *Engine) ForgiveGuess(ctx context.Context, g Guess) error {
	if g.key == "" {
		return nil
	}
	if err := e.rdb.Decr(ctx, g.key).Err(); err != nil {
		return fmt.Errorf("queue: forgive a guess: %w", err)
	}
	return nil
}
