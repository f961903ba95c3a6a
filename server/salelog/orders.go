package salelog

import (
	"context"
	"errors"
	"time"

	"waitingroom/server/order"
)

// Orders is an order service whose failed attempts are counted, by
// reason, for the summary, and whose every attempt its observers see.
type Orders struct {
	*order.Service
	log *Log
	obs []OrderObserver
}

// OrderObserver is told about every order attempt: its room, "placed" or
// why it failed (Reason), and how long Place took. It must not block.
type OrderObserver interface {
	ObserveOrder(room, reason string, took time.Duration)
}

// Observe adds observers of every later Place, and returns o. Call it
// before serving.
func (o *Orders) Observe(obs ...OrderObserver) *Orders {
	o.obs = append(o.obs, obs...)
	return o
}

// CountOrders wraps svc so that the summary knows why orders fail.
func (l *Log) CountOrders(svc *order.Service) *Orders { return &Orders{Service: svc, log: l} }

// Place places the order and counts its failure, if any.
func (o *Orders) Place(ctx context.Context, r order.Request) (order.Order, error) {
	start := time.Now()
	placed, err := o.Service.Place(ctx, r)
	took := time.Since(start)
	reason := "placed"
	if err != nil {
		reason = Reason(err)
		o.log.Failed(r.Room, reason)
	}
	for _, ob := range o.obs {
		ob.ObserveOrder(r.Room, reason, took)
	}
	return placed, err
}

// Reason names why an order failed, with the API's error codes.
func Reason(err error) string {
	var rl *order.RateLimitedError
	switch {
	case errors.As(err, &rl):
		return "rate_limited"
	case errors.Is(err, order.ErrSoldOut):
		return "sold_out"
	case errors.Is(err, order.ErrInsufficientStock):
		return "insufficient_stock"
	case errors.Is(err, order.ErrTokenMissing):
		return "token_missing"
	case errors.Is(err, order.ErrTokenInvalid):
		return "token_invalid"
	case errors.Is(err, order.ErrTokenInUse):
		return "token_in_use"
	case errors.Is(err, order.ErrTokenUsed):
		return "token_used"
	case errors.Is(err, order.ErrOverLimit):
		return "over_limit"
	case errors.Is(err, order.ErrProductRequired), errors.Is(err, order.ErrProductNotFound), errors.Is(err, order.ErrBadQuantity):
		return "bad_order"
	case errors.Is(err, order.ErrUnavailable):
		return "unavailable"
	}
	return "other"
}

// Gate is the order path's side of Redis, with the room's sell-out and
// reopening logged once per change of the flag, whichever instance makes
// it.
type Gate struct {
	order.Gate
	flag SoldOutFlag
	log  *Log
}

// SoldOutFlag sets a room's sold-out flag and reports whether the call
// changed it: of calls at once, exactly one does (queue.Engine).
type SoldOutFlag interface {
	ChangeSoldOut(ctx context.Context, room string, soldOut bool) (changed bool, err error)
}

// WatchGate wraps g so that the order path's sell-outs (and a restock's
// reopening) are logged.
func (l *Log) WatchGate(g interface {
	order.Gate
	SoldOutFlag
}) *Gate {
	return &Gate{Gate: g, flag: g, log: l}
}

// SetSoldOut sets the room's flag and logs the change, when this call
// made it: the order path calls it after every sold-out attempt, on
// every instance, and the audit log has the sell-out once.
func (g *Gate) SetSoldOut(ctx context.Context, room string, soldOut bool) error {
	changed, err := g.flag.ChangeSoldOut(ctx, room, soldOut)
	switch {
	case err != nil:
		return err
	case !changed:
	case soldOut:
		g.log.Event(room, SoldOut, "why", "no stock left")
	default:
		g.log.Event(room, Reopened, "why", "restocked")
	}
	return nil
}
