package sse

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"time"

	"waitingroom/server/redisconn"
)

// The hub tries Redis again after a failed try first after
// retryRedisFirst, then twice as late each time, up to retryRedisMax. The
// Redis client itself may answer a refusal it remembers for up to a
// second after Redis is back (see redisconn.Unreachable): a try that
// finds it is repeated soon after, not given up.
const (
	retryRedisFirst = 100 * time.Millisecond
	retryRedisMax   = 500 * time.Millisecond
)

// A held stream is ended, once Redis answers, with a retry between
// releaseRetryMin and releaseRetryMin+releaseRetrySpread: its page
// reconnects soon, and the held pages of a process do not all come at
// once.
const (
	releaseRetryMin    = 250 * time.Millisecond
	releaseRetrySpread = time.Second
)

// errStopped reports that the hub was closed while it waited for Redis.
var errStopped = errors.New("sse: hub closed")

// outageFrame tells a page that its position is on hold until the next
// one: the server cannot reach Redis (it shows "Reconnecting…").
var outageFrame = chunk([]byte("event: outage\ndata: {\"reconnecting\":true}\n\n"))

// endOfStream is the last chunk of a stream's response.
const endOfStream = "0\r\n\r\n"

// Hold answers a buyer's stream to room that could not be served because
// Redis is unreachable (see redisconn.Unreachable), on nc, a hijacked
// connection: the response headers, the stream's usual retry and an
// outage event at once (the page shows "Reconnecting…", as open streams
// do), not a refusal. An EventSource gives up on a refusal and its page
// falls back to a backoff of its own; a page that reconnected during the
// outage would then come back seconds after Redis. The hub keeps the
// stream, with heartbeats, until it can read the room from Redis again,
// then ends it with a short jittered retry (releaseRetryMin and
// releaseRetrySpread): the page reconnects and is served as any reconnect.
// slot becomes the stream's. On failure nc is closed and slot is left to
// its owner.
func (h *Hub) Hold(nc net.Conn, room string, slot *Slot) {
	c := newConn(nc)
	c.ip, c.heldFor = slot.ip, room
	b := append([]byte(streamHead), "\r\n"...)
	b = append(b, chunk(retryField())...)
	b = append(b, outageFrame...)
	if !handshake(nc, b) {
		return
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		nc.Close()
		return
	}
	h.held[c] = struct{}{}
	h.indexIPLocked(c)
	h.conns.Add(1)
	h.metrics.Connections.Inc()
	if !h.releasing {
		h.releasing = true
		h.wg.Add(1) // under h.mu, before Close can wait
		go func() {
			defer h.wg.Done()
			h.releaseWhenAnswered()
		}()
	}
	h.mu.Unlock()
	slot.done = true
}

// releaseWhenAnswered tries Redis, through the room of a held stream,
// until it answers, then ends every held stream. It runs while streams
// are held; Subscribed makes it try again at once.
func (h *Hub) releaseWhenAnswered() {
	for {
		room, ok := h.heldRoom()
		if !ok {
			return
		}
		if err := h.untilAnswered(func(ctx context.Context) error {
			_, err := h.src.Snapshot(ctx, room)
			return err
		}); errors.Is(err, errStopped) {
			return
		}
		h.releaseHeld()
	}
}

// heldRoom returns the room of one held stream; with none held, it
// reports false and marks the release loop as ended.
func (h *Hub) heldRoom() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.held {
		return c.heldFor, true
	}
	h.releasing = false
	return "", false
}

// releaseHeld ends every held stream with a short jittered retry.
func (h *Hub) releaseHeld() {
	for _, c := range h.heldConns() {
		retry := releaseRetryMin + rand.N(releaseRetrySpread)
		b := chunk([]byte("retry: " + strconv.FormatInt(retry.Milliseconds(), 10) + "\n\n"))
		c.writeFramed(append(b, endOfStream...)) // a client gone takes no retry
		h.drop(c, nil)
	}
}

// untilAnswered calls try until Redis answers it: try succeeds or fails
// for another reason than an unreachable Redis (that error is returned).
// Between tries it waits retryRedisFirst, then twice as long each time
// up to retryRedisMax; Subscribed cuts the wait short. It returns
// errStopped when the hub is closed.
func (h *Hub) untilAnswered(try func(ctx context.Context) error) error {
	wait := retryRedisFirst
	for {
		subscribed := h.subscribedSignal()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := try(ctx)
		cancel()
		if !redisconn.Unreachable(err) {
			return err
		}
		select {
		case <-h.stop:
			return errStopped
		case <-subscribed:
			wait = retryRedisFirst
		case <-h.opt.Clock.After(wait):
			wait = min(2*wait, retryRedisMax)
		}
	}
}

// subscribedSignal returns a channel that Subscribed closes.
func (h *Hub) subscribedSignal() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.subscribed
}

// heldConns returns the held streams, for the heartbeat.
func (h *Hub) heldConns() []*conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	held := make([]*conn, 0, len(h.held))
	for c := range h.held {
		held = append(held, c)
	}
	return held
}
