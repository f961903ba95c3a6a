package order

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/jonboulle/clockwork"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/token"
)

// Gate is the entry-token side of an order, in Redis.
type Gate interface {
	Claim(ctx context.Context, room, visitor, token string, ttl time.Duration) (queue.Claim, error)
	Release(ctx context.Context, room, visitor, holder string, pause time.Duration) error
	Consume(ctx context.Context, room, visitor, holder string) error
	TakeOrderSlot(ctx context.Context, room string) (time.Duration, error)
	RefundOrderSlot(ctx context.Context, room string) error
	SetSoldOut(ctx context.Context, room string, soldOut bool) error
}

// DefaultFailurePause is how long a token rests after
// queue.MaxFailedAttempts failed attempts (unknown product, sold out).
const DefaultFailurePause = 10 * time.Second

// releaseWithin bounds the retries of a release that Redis did not answer.
const releaseWithin = 3 * time.Second

// Service places orders.
type Service struct {
	store     *Store
	gate      Gate
	products  *productCache
	claimTTL  time.Duration
	failPause time.Duration
	log       *slog.Logger
}

// NewService returns a Service. claimTTL bounds how long a crashed attempt
// holds its token (0: queue.DefaultClaimTTL).
func NewService(store *Store, gate Gate, claimTTL time.Duration, log *slog.Logger) *Service {
	if claimTTL <= 0 {
		claimTTL = queue.DefaultClaimTTL
	}
	return &Service{store: store, gate: gate, products: newProductCache(store.Products, ProductsTTL),
		claimTTL: claimTTL, failPause: DefaultFailurePause, log: log}
}

// WithClock makes clk the clock that decides whether a cached product
// list is fresh (nil, the default, is the real one). Set it before the
// service is used.
func (s *Service) WithClock(clk clockwork.Clock) *Service {
	if clk == nil {
		clk = clockwork.NewRealClock()
	}
	s.products.now = clk.Now
	return s
}

// Products returns room's products, as of at most ProductsTTL ago. It
// returns ErrUnavailable when the database does not answer.
func (s *Service) Products(ctx context.Context, roomName string) ([]Product, error) {
	ps, err := s.products.get(ctx, roomName)
	if err != nil {
		s.log.Warn("order: products", "room", roomName, "err", err)
		return nil, ErrUnavailable
	}
	return slices.Clone(ps), nil
}

// ForgetProducts drops this instance's cached product list of room, after
// its products changed.
func (s *Service) ForgetProducts(roomName string) { s.products.forget(roomName) }

// Get returns the visitor's order in room by its public id, or
// sql.ErrNoRows when there is none of theirs.
func (s *Service) Get(ctx context.Context, roomName, visitor, publicID string) (Order, error) {
	if !ValidPublicID(publicID) {
		return Order{}, sql.ErrNoRows
	}
	o, err := s.store.Get(ctx, roomName, visitor, publicID)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		s.log.Warn("order: get", "room", roomName, "err", err)
		return Order{}, ErrUnavailable
	}
	return o, err
}

// Place runs one order attempt, in order:
//  1. the request's shape (no I/O); the buyer's total against the room's
//     maxPerBuyer (a *LimitError leaves the token as it was); then the
//     token's claim in Redis, bound to the visitor and fenced by a fresh
//     holder id: READY -> CLAIMED, so a concurrent second use gets
//     ErrTokenInUse; the claim never outlives the pass;
//  2. the product and quantity, against the room's cached product list: an
//     invalid order never reaches the order bucket or the database, and
//     counts against the token (queue.MaxFailedAttempts failures pause it);
//  3. one token from the room's order bucket (RateLimitedError if empty);
//  4. one transaction: the buyer's total again, under the buyer's lock;
//     the stock under stock >= quantity; and the order, whose unique token
//     hash refuses a second order for the token even if a crash came
//     between a commit and the token's consumption;
//  5. on commit the token is consumed and its slot freed; on a rollback the
//     claim is released, so the buyer can retry, and a 4xx gives the bucket
//     its slot back.
//
// Redis down means ErrUnavailable before any database write (fail closed;
// only a capped room reads the buyer's total first).
func (s *Service) Place(ctx context.Context, r Request) (Order, error) {
	switch {
	case r.Token == "":
		return Order{}, ErrTokenMissing
	case !token.Valid(r.Token):
		return Order{}, ErrTokenInvalid
	case r.Quantity < 1 || r.Quantity > MaxQuantity:
		return Order{}, ErrBadQuantity
	}
	if r.MaxPerBuyer > 0 {
		if err := s.checkLimit(ctx, r); err != nil {
			return Order{}, err
		}
	}
	cctx, cancel := context.WithTimeout(ctx, s.claimTTL/2)
	defer cancel()
	c, err := s.gate.Claim(cctx, r.Room, r.Visitor, r.Token, s.claimTTL)
	if err != nil {
		// A retry of a request that succeeded (its token is consumed) gets
		// the same answer when it names the same idempotency key.
		if errors.Is(err, queue.ErrTokenUsed) || errors.Is(err, queue.ErrTokenInvalid) {
			if o, ok := s.byIdempotencyKey(cctx, r); ok {
				return o, nil
			}
		}
		return Order{}, s.claimFailed(r, err)
	}
	// An attempt must not outlive its claim: past it another attempt may
	// take the token.
	ctx, cancel = context.WithTimeout(cctx, c.TTL/2)
	defer cancel()
	a := &attempt{s: s, r: r, claim: c, until: time.Now().Add(c.TTL)}

	p, err := s.pick(ctx, r)
	if errors.Is(err, ErrSoldOut) && s.store.tokenOrdered(ctx, r.Token) {
		// Not sold out for this token: it ordered before and its
		// consumption was lost (a crash in between). Finish it.
		a.consume(ctx)
		if o, ok := s.byIdempotencyKey(ctx, r); ok {
			return o, nil
		}
		return Order{}, ErrTokenUsed
	}
	if err != nil {
		a.release(ctx, "product", !errors.Is(err, ErrUnavailable))
		return Order{}, err
	}

	if wait, err := s.gate.TakeOrderSlot(ctx, r.Room); err != nil {
		a.release(ctx, "bucket", false)
		if errors.Is(err, queue.ErrRateLimited) {
			return Order{}, &RateLimitedError{RetryAfter: wait}
		}
		s.log.Warn("order: bucket", "room", r.Room, "err", err)
		return Order{}, ErrUnavailable
	}

	o, err := s.store.place(ctx, r, p.ID)
	switch {
	case err == nil:
	case errors.Is(err, ErrInsufficientStock):
		// The cached stock was stale: less is left than asked for.
		s.refund(ctx, r.Room)
		a.release(ctx, "insufficient stock", true)
		s.products.forget(r.Room)
		return Order{}, err
	case errors.Is(err, ErrOverLimit):
		// Another order of this buyer's came first (two passes at once).
		s.refund(ctx, r.Room)
		a.release(ctx, "over limit", false)
		return Order{}, err
	case errors.Is(err, errNoStock):
		s.refund(ctx, r.Room)
		a.release(ctx, "sold out", true)
		s.products.forget(r.Room)
		s.checkSoldOut(ctx, r.Room)
		return Order{}, ErrSoldOut
	case errors.Is(err, errDuplicate):
		// Committed before, never consumed (a crash in between): finish it.
		// A retry of that very request gets its order.
		s.refund(ctx, r.Room)
		a.consume(ctx)
		if o, ok := s.byIdempotencyKey(ctx, r); ok {
			return o, nil
		}
		return Order{}, ErrTokenUsed
	case errors.Is(err, errIdemTaken):
		s.refund(ctx, r.Room)
		a.release(ctx, "idempotency race", false)
		if o, ok := s.byIdempotencyKey(ctx, r); ok {
			return o, nil
		}
		return Order{}, ErrUnavailable
	default:
		a.release(ctx, "database error", false)
		s.log.Warn("order: place", "room", r.Room, "err", err)
		return Order{}, ErrUnavailable
	}
	// Sold out is flagged before the pass is consumed: consuming frees its
	// slot, and a tick in between would let the next buyer into a room
	// with nothing left.
	s.products.forget(r.Room)
	s.checkSoldOut(ctx, r.Room)
	a.consume(ctx)
	return o, nil
}

// checkLimit refuses, before the token is claimed, an order that would
// take the visitor's placed orders in the room past r.MaxPerBuyer, with a
// *LimitError: the token stays as it was. A token that already ordered
// passes, so that its claim answers a retry with its order. The order's
// transaction checks again, under the buyer's lock.
func (s *Service) checkLimit(ctx context.Context, r Request) error {
	n, err := bought(ctx, s.store.db, r.Room, r.Visitor)
	if err != nil {
		s.log.Warn("order: limit per buyer", "room", r.Room, "err", err)
		return ErrUnavailable
	}
	if n+r.Quantity <= r.MaxPerBuyer || s.store.tokenOrdered(ctx, r.Token) {
		return nil
	}
	return &LimitError{Limit: r.MaxPerBuyer, Left: max(0, r.MaxPerBuyer-n)}
}

// claimFailed maps a refused claim onto Place's errors.
func (s *Service) claimFailed(r Request, err error) error {
	var wait *queue.WaitError
	switch {
	case errors.As(err, &wait) && errors.Is(err, queue.ErrTokenPaused):
		return &WaitError{Err: ErrTokenPaused, RetryAfter: wait.RetryAfter}
	case errors.As(err, &wait):
		return &WaitError{Err: ErrTokenInUse, RetryAfter: wait.RetryAfter}
	case errors.Is(err, queue.ErrTokenUsed):
		return ErrTokenUsed
	case errors.Is(err, queue.ErrTokenInvalid):
		return ErrTokenInvalid
	}
	s.log.Warn("order: claim", "room", r.Room, "err", err)
	return ErrUnavailable
}

// attempt is one claimed order attempt.
type attempt struct {
	s     *Service
	r     Request
	claim queue.Claim
	until time.Time // the claim's deadline
}

// release gives the token back to its owner after a rollback; failed
// counts the attempt against the token. A detached context: the request
// may be gone, the claim must not stay until its deadline. A release that
// Redis did not answer (a blip) is retried, with backoff, while the claim
// stands and at most releaseWithin: go-redis reconnects on the next try.
func (a *attempt) release(ctx context.Context, why string, failed bool) {
	var pause time.Duration
	if failed {
		pause = a.s.failPause
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), minTime(a.until, time.Now().Add(releaseWithin)))
	defer cancel()
	backoff := 50 * time.Millisecond
	for {
		err := a.s.gate.Release(ctx, a.r.Room, a.r.Visitor, a.claim.Holder, pause)
		if err == nil || errors.Is(err, queue.ErrTokenPaused) || errors.Is(err, queue.ErrTokenNotClaimed) ||
			errors.Is(err, queue.ErrTokenInvalid) {
			return // released, or no longer ours to release
		}
		select {
		case <-ctx.Done():
			a.s.log.Warn("order: release claim", "room", a.r.Room, "after", why, "err", err)
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 800*time.Millisecond)
	}
}

// consume ends the token after a commit. A failure leaves the order
// standing: the unique token hash refuses any replay, and the pass expires.
func (a *attempt) consume(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	err := a.s.gate.Consume(ctx, a.r.Room, a.r.Visitor, a.claim.Holder)
	if err != nil && !errors.Is(err, queue.ErrTokenInvalid) && !errors.Is(err, queue.ErrTokenNotClaimed) {
		a.s.log.Warn("order: consume token after commit", "room", a.r.Room, "err", err)
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// refund gives the room's order bucket back the slot of an attempt that
// ended in a 4xx.
func (s *Service) refund(ctx context.Context, roomName string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := s.gate.RefundOrderSlot(ctx, roomName); err != nil {
		s.log.Warn("order: refund order slot", "room", roomName, "err", err)
	}
}

// byIdempotencyKey returns the visitor's order placed with the request's
// idempotency key, if any.
// PlacedWith returns the order that token already placed in room, when it
// was visitor's: what a buyer who sent the order form twice (a double
// click, the back button) placed the first time.
func (s *Service) PlacedWith(ctx context.Context, room, visitor, entryToken string) (Order, bool) {
	if visitor == "" || !token.Valid(entryToken) {
		return Order{}, false
	}
	o, err := s.store.byToken(ctx, room, visitor, entryToken)
	return o, err == nil
}

func (s *Service) byIdempotencyKey(ctx context.Context, r Request) (Order, bool) {
	if r.IdempotencyKey == "" {
		return Order{}, false
	}
	o, err := s.store.byIdempotencyKey(ctx, r.Room, r.Visitor, r.IdempotencyKey)
	return o, err == nil
}

// checkSoldOut flags the room sold out in Redis once its stock is gone
// (Stock.SoldOut), so the issuer stops admitting and waiting pages are
// told. An order only takes stock: it never clears the flag.
func (s *Service) checkSoldOut(ctx context.Context, roomName string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	st, err := s.store.stock(ctx, roomName)
	if err != nil || !st.SoldOut() {
		return
	}
	if err := s.gate.SetSoldOut(ctx, roomName, true); err != nil && !errors.Is(err, room.ErrNotFound) {
		s.log.Warn("order: mark sold out", "room", roomName, "err", err)
	}
}

// pick checks the request's product and quantity against the room's
// cached product list. A product left out is the room's only one.
func (s *Service) pick(ctx context.Context, r Request) (Product, error) {
	ps, err := s.products.get(ctx, r.Room)
	if err != nil {
		s.log.Warn("order: products", "room", r.Room, "err", err)
		return Product{}, ErrUnavailable
	}
	var p Product
	switch {
	case r.ProductID != 0:
		i := slices.IndexFunc(ps, func(p Product) bool { return p.ID == r.ProductID })
		if i < 0 {
			return Product{}, ErrProductNotFound
		}
		p = ps[i]
	case len(ps) == 1:
		p = ps[0]
	case len(ps) == 0:
		return Product{}, ErrProductNotFound
	default:
		return Product{}, ErrProductRequired
	}
	switch {
	case p.Stock < 1:
		return Product{}, ErrSoldOut
	case p.Stock < int64(r.Quantity):
		return Product{}, &StockError{Left: p.Stock}
	}
	return p, nil
}
