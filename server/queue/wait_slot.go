package queue

import (
	"context"
	"fmt"
	"time"

	"waitingroom/server/room"
)

// The no-JavaScript joins of one client network are spaced in Redis, so
// that the wait path (package challenge's wait tokens) is never faster
// than a script.
const (
	// WaitSpacing is the least time between two no-JavaScript joins of one
	// network: at most 2 a second.
	WaitSpacing = 500 * time.Millisecond
	// WaitAhead is how far ahead a network's joins can be booked; past it
	// a network is refused until its bookings catch up.
	WaitAhead = 5 * time.Minute
	// WaitNetworks bounds the networks booked at once in a room.
	WaitNetworks = 100_000
	// unknownNetwork books the joins of clients without a known network.
	unknownNetwork = "?"
)

// WaitSlot is a booking of BookWait.
type WaitSlot struct {
	// Booked: At is when the visitor may join. Otherwise the network is
	// booked WaitAhead ahead and At is when to ask again.
	Booked bool
	At     time.Time
	// Now is Redis's time of the booking.
	Now time.Time
}

// BookWait books the next no-JavaScript join of a client of network in
// roomName, wait after the network's next free moment; the network's next
// join is WaitSpacing later. It returns room.ErrNotFound for an unknown
// room.
func (e *Engine) BookWait(ctx context.Context, roomName, network string, wait time.Duration) (WaitSlot, error) {
	if network == "" {
		network = unknownNetwork
	}
	res, err := e.run(ctx, e.s.waitSlot, roomName, network, WaitSpacing.Milliseconds(), wait.Milliseconds(),
		WaitAhead.Milliseconds(), WaitNetworks).Slice()
	if err != nil {
		return WaitSlot{}, fmt.Errorf("queue: book wait %s: %w", roomName, err)
	}
	if len(res) != 3 {
		return WaitSlot{}, fmt.Errorf("queue: book wait %s: unexpected reply %v", roomName, res)
	}
	code := asInt(res[0])
	if code < 0 {
		return WaitSlot{}, fmt.Errorf("queue: book wait %s: %w", roomName, room.ErrNotFound)
	}
	return WaitSlot{Booked: code == 1, At: time.UnixMilli(asInt(res[1])), Now: time.UnixMilli(asInt(res[2]))}, nil
}
