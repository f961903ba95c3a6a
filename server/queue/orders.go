package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"waitingroom/server/room"
)

// ErrRateLimited reports that the room's order bucket is empty.
var ErrRateLimited = errors.New("order rate limit reached")

// TakeOrderSlot takes one token from the room's global order bucket (the
// seed's token bucket, on Redis TIME, shared by every instance). When the
// bucket is empty it returns ErrRateLimited and how long until a token is
// back; room.ErrNotFound for an unknown room.
func (e *Engine) TakeOrderSlot(ctx context.Context, roomName string) (time.Duration, error) {
	res, err := e.run(ctx, e.s.orderBucket, roomName).Int64Slice()
	if err != nil {
		return 0, fmt.Errorf("queue: order bucket of %s: %w", roomName, err)
	}
	if len(res) != 2 {
		return 0, fmt.Errorf("queue: order bucket of %s: unexpected reply %v", roomName, res)
	}
	switch res[0] {
	case 1:
		return 0, nil
	case 0:
		return time.Duration(res[1]) * time.Millisecond, ErrRateLimited
	}
	return 0, fmt.Errorf("queue: order bucket of %s: %w", roomName, room.ErrNotFound)
}

// RefundOrderSlot gives back a slot taken by TakeOrderSlot for an attempt
// that ended in a 4xx (sold out, already used), so that refused orders do
// not drain the bucket. The bucket never exceeds its capacity.
func (e *Engine) RefundOrderSlot(ctx context.Context, roomName string) error {
	if err := e.run(ctx, e.s.orderRefund, roomName).Err(); err != nil {
		return fmt.Errorf("queue: refund order slot of %s: %w", roomName, err)
	}
	return nil
}

// SetSoldOut marks room sold out, or open again. A sold-out room admits
// and enters nobody, and its next tick tells every waiting page. It
// returns room.ErrNotFound for an unknown room.
func (e *Engine) SetSoldOut(ctx context.Context, roomName string, soldOut bool) error {
	_, err := e.ChangeSoldOut(ctx, roomName, soldOut)
	return err
}

// ChangeSoldOut is SetSoldOut that also reports whether this call changed
// the flag: of calls made at once, on any instances, exactly one sees a
// change, so that a sell-out is told once.
func (e *Engine) ChangeSoldOut(ctx context.Context, roomName string, soldOut bool) (changed bool, err error) {
	flag := "0"
	if soldOut {
		flag = "1"
	}
	n, err := e.run(ctx, e.s.soldOut, roomName, flag).Int64()
	if err != nil {
		return false, fmt.Errorf("queue: mark %s sold out: %w", roomName, err)
	}
	if n < 0 {
		return false, fmt.Errorf("queue: mark %s sold out: %w", roomName, room.ErrNotFound)
	}
	return n == 1, nil
}
