package order

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/token"
)

// Gate is the entry-token side of an order, in Redis.
type Gate interface {
	Claim(ctx context.Context, room, visitor, token string, ttl time.Duration) error
	Release(ctx context.Context, room, visitor, token string) error
	Consume(ctx context.Context, room, visitor, token string) error
	TakeOrderSlot(ctx context.Context, room string) (time.Duration, error)
	SetSoldOut(ctx context.Context, room string, soldOut bool) error
}

// Service places orders.
type Service struct {
	store    *Store
	gate     Gate
	claimTTL time.Duration
	log      *slog.Logger
}

// NewService returns a Service. claimTTL bounds how long a crashed attempt
// holds its token (0: queue.DefaultClaimTTL).
func NewService(store *Store, gate Gate, claimTTL time.Duration, log *slog.Logger) *Service {
	if claimTTL <= 0 {
		claimTTL = queue.DefaultClaimTTL
	}
	return &Service{store: store, gate: gate, claimTTL: claimTTL, log: log}
}

// Products returns room's products. It returns ErrUnavailable when the
// database does not answer.
func (s *Service) Products(ctx context.Context, roomName string) ([]Product, error) {
	ps, err := s.store.Products(ctx, roomName)
	if err != nil {
		s.log.Warn("order: products", "room", roomName, "err", err)
		return nil, ErrUnavailable
	}
	return ps, nil
}

// Get returns the visitor's order id in room, or ErrProductNotFound-like
// sql.ErrNoRows when there is none of theirs.
func (s *Service) Get(ctx context.Context, roomName, visitor string, id int64) (Order, error) {
	o, err := s.store.Get(ctx, roomName, visitor, id)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		s.log.Warn("order: get", "room", roomName, "err", err)
		return Order{}, ErrUnavailable
	}
	return o, err
}

// Place runs one order attempt, in order:
//  1. the token's shape (no I/O), then its claim in Redis, bound to the
//     visitor: READY -> CLAIMED, so a concurrent second use gets
//     ErrTokenInUse;
//  2. one token from the room's order bucket (RateLimitedError if empty);
//  3. one transaction: the stock under stock >= quantity, and the order,
//     whose unique token hash refuses a second order for the token even if
//     a crash came between a commit and the token's consumption;
//  4. on commit the token is consumed and its slot freed; on a rollback the
//     claim is released, so the buyer can retry.
//
// Redis down means ErrUnavailable before any database work (fail closed).
func (s *Service) Place(ctx context.Context, r Request) (Order, error) {
	// An attempt must not outlive its claim: past the claim's TTL another
	// attempt may take the token, and this one's release would undo it.
	ctx, cancel := context.WithTimeout(ctx, s.claimTTL/2)
	defer cancel()
	switch {
	case r.Token == "":
		return Order{}, ErrTokenMissing
	case !token.Valid(r.Token):
		return Order{}, ErrTokenInvalid
	case r.Quantity < 1 || r.Quantity > MaxQuantity:
		return Order{}, ErrBadQuantity
	}
	if err := s.gate.Claim(ctx, r.Room, r.Visitor, r.Token, s.claimTTL); err != nil {
		switch {
		case errors.Is(err, queue.ErrTokenInvalid):
			// A retry of a request that succeeded (its token is consumed)
			// gets the same answer when it names the same idempotency key.
			if r.IdempotencyKey != "" {
				if o, err := s.store.byIdempotencyKey(ctx, r.Room, r.Visitor, r.IdempotencyKey); err == nil {
					return o, nil
				}
			}
			return Order{}, ErrTokenInvalid
		case errors.Is(err, queue.ErrTokenInUse):
			return Order{}, ErrTokenInUse
		}
		s.log.Warn("order: claim", "room", r.Room, "err", err)
		return Order{}, ErrUnavailable
	}
	release := func(why string) {
		// A detached context: the request may be gone, the claim must not
		// stay until its TTL.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if err := s.gate.Release(ctx, r.Room, r.Visitor, r.Token); err != nil {
			s.log.Warn("order: release claim", "room", r.Room, "after", why, "err", err)
		}
	}

	if wait, err := s.gate.TakeOrderSlot(ctx, r.Room); err != nil {
		release("bucket")
		if errors.Is(err, queue.ErrRateLimited) {
			return Order{}, &RateLimitedError{RetryAfter: wait}
		}
		s.log.Warn("order: bucket", "room", r.Room, "err", err)
		return Order{}, ErrUnavailable
	}

	productID, err := s.resolveProduct(ctx, r)
	if err != nil {
		release("product")
		return Order{}, err
	}
	o, err := s.store.place(ctx, r, productID)
	switch {
	case err == nil:
	case errors.Is(err, errNoStock):
		release("sold out")
		s.checkSoldOut(ctx, r.Room)
		return Order{}, ErrSoldOut
	case errors.Is(err, errDuplicate):
		// Committed before, never consumed (a crash in between): finish it.
		// A retry of that very request gets its order.
		s.consume(ctx, r)
		if r.IdempotencyKey != "" {
			if o, err := s.store.byIdempotencyKey(ctx, r.Room, r.Visitor, r.IdempotencyKey); err == nil {
				return o, nil
			}
		}
		return Order{}, ErrTokenUsed
	case errors.Is(err, errIdemTaken):
		release("idempotency race")
		if o, err := s.store.byIdempotencyKey(ctx, r.Room, r.Visitor, r.IdempotencyKey); err == nil {
			return o, nil
		}
		return Order{}, ErrUnavailable
	default:
		release("database error")
		s.log.Warn("order: place", "room", r.Room, "err", err)
		return Order{}, ErrUnavailable
	}
	s.consume(ctx, r)
	s.checkSoldOut(ctx, r.Room)
	return o, nil
}

// consume ends the token after a commit. A failure leaves the order
// standing: the unique token hash refuses any replay, and the token's TTL
// cleans up.
func (s *Service) consume(ctx context.Context, r Request) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := s.gate.Consume(ctx, r.Room, r.Visitor, r.Token); err != nil && !errors.Is(err, queue.ErrTokenInvalid) {
		s.log.Warn("order: consume token after commit", "room", r.Room, "err", err)
	}
}

// checkSoldOut flags the room sold out in Redis once its stock is gone, so
// the issuer stops admitting and waiting pages are told.
func (s *Service) checkSoldOut(ctx context.Context, roomName string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	left, err := s.store.stockLeft(ctx, roomName)
	if err != nil || left > 0 {
		return
	}
	if err := s.gate.SetSoldOut(ctx, roomName, true); err != nil && !errors.Is(err, room.ErrNotFound) {
		s.log.Warn("order: mark sold out", "room", roomName, "err", err)
	}
}

func (s *Service) resolveProduct(ctx context.Context, r Request) (int64, error) {
	ps, err := s.store.Products(ctx, r.Room)
	if err != nil {
		s.log.Warn("order: products", "room", r.Room, "err", err)
		return 0, ErrUnavailable
	}
	if r.ProductID == 0 {
		if len(ps) == 1 {
			return ps[0].ID, nil
		}
		if len(ps) == 0 {
			return 0, ErrProductNotFound
		}
		return 0, ErrProductRequired
	}
	for _, p := range ps {
		if p.ID == r.ProductID {
			return p.ID, nil
		}
	}
	return 0, ErrProductNotFound
}
