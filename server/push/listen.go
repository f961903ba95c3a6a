package push

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/queue"
)

// Handler receives what the subscription delivers. Its methods run on the
// subscription's goroutine and must not block.
type Handler interface {
	// Event is one room's admission tick.
	Event(room string, e queue.Event)
	// Subscribed is called each time the subscription is (re)established;
	// events may have been lost before it.
	Subscribed()
	// Lost is called once when the subscription breaks (Redis is gone);
	// Subscribed follows when it is back.
	Lost()
	// Woken is told that a room that slept was woken (see
	// queue.Admission's Asleep): its ticks are to run again.
	Woken(room string)
}

// A broken subscription is tried again after resubscribeFirst, then twice
// as late each time up to resubscribeMax. Pushes resume only once it is
// back: the longest wait is most of the delay between Redis' return and
// the pages' next positions, and a try costs one refused dial.
const (
	resubscribeFirst = 50 * time.Millisecond
	resubscribeMax   = 500 * time.Millisecond
)

// Listen holds this process's one Redis subscription, to the events
// channel of every room of namespace ns, until ctx is done. Pub/sub
// ignores the database number, so an event of another deployment on the
// same Redis server may still arrive: any message whose channel is not of
// ns is dropped. go-redis reconnects a dropped subscription by itself;
// Listen tells h each time it is back.
func Listen(ctx context.Context, rdb redis.UniversalClient, ns string, h Handler, log *slog.Logger) error {
	ps := rdb.PSubscribe(ctx, queue.EventsPattern(ns))
	defer ps.Close()
	// A blocked Receive does not watch ctx: closing the subscription ends it.
	stop := context.AfterFunc(ctx, func() { ps.Close() })
	defer stop()
	backoff := resubscribeFirst
	healthy := false
	for {
		msg, err := ps.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if healthy {
				healthy = false
				h.Lost()
			}
			if !errors.Is(err, redis.ErrClosed) {
				log.Warn("push: subscription", "err", err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, resubscribeMax)
			continue
		}
		backoff = resubscribeFirst
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "psubscribe" {
				healthy = true
				h.Subscribed()
			}
		case *redis.Message:
			room, ok := queue.RoomOfChannel(ns, m.Channel)
			if !ok {
				continue
			}
			if m.Payload == queue.WakeMessage {
				h.Woken(room)
				continue
			}
			e, err := queue.ParseEvent([]byte(m.Payload))
			if err != nil {
				log.Warn("push: bad event", "room", room, "err", err)
				continue
			}
			h.Event(room, e)
		}
	}
}
