package sse

import (
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"waitingroom/server/queue"
)

// errSlow reports a client whose socket cannot take the next event at once:
// it is dropped, never waited for.
var errSlow = errors.New("sse: client cannot keep up")

// tcpUserTimeout is Linux's TCP_USER_TIMEOUT socket option, and
// peerSilence how long a stream's sent data may stay unacknowledged.
const (
	tcpUserTimeout = 0x12
	peerSilence    = 60 * time.Second
)

// fallbackWriteTimeout bounds a write on a connection that offers no raw
// file descriptor (not the case for TCP on Linux).
const fallbackWriteTimeout = 200 * time.Millisecond

// conn is one hijacked SSE connection. The hub owns it: nothing reads
// from it and every write is non-blocking, so it costs no goroutine and no
// buffer while idle.
type conn struct {
	nc      net.Conn
	raw     syscall.RawConn // nil when nc offers no file descriptor
	room    *Room
	visitor string
	ip      string
	// widget marks an embedded widget's stream: no visitor, no ticket; it
	// is sent the room's one widget frame (see attachWidget).
	widget bool
	// heldFor is the room a held stream waits to be served (see Hold);
	// "" for a stream attached to its room.
	heldFor string
	ticket  atomic.Int64 // the line number, which ranks count from
	// shown is the visitor's own ticket (a drawn buyer's pre-queue
	// ticket); prequeued marks a buyer waiting for the draw.
	shown atomic.Int64
	// lineName is the name of the visitor's line in a room with lines,
	// and that line's index (nil otherwise).
	lineName  atomic.Pointer[lineLabel]
	prequeued atomic.Bool
	// born is when the room the ticket is of was created (Position.Born;
	// 0: unknown).
	born atomic.Int64

	mu     sync.Mutex // serialises writes
	closed bool

	// Owned by the room's fan-out, which runs one at a time per room.
	lastRank int64
	// epoch is the room state's epoch that lastRank and lastTick belong to.
	epoch    int64
	lastTick int64 // the newest tick this connection was sent
	// When lastRank was sent and when the next scheduled event
	// is due (ns on the hub's clock), the countdown the page was told (its
	// Every and Pace) and the room's broadcast generation it saw.
	sentAt  int64
	nextAt  int64
	cdEvery int32
	cdPace  int32 // hundredths of a rank per second, as the page reads it
	gen     uint32
	rateGen uint32 // the room's rate generation it saw
	slow    uint8  // halvings of its countdown's pace, after corrections
	// hbSlot is the part of the heartbeat period this connection's
	// heartbeat is written in (see heartbeatSlots).
	hbSlot uint8
	// lastShown is what a widget's stream was last sent.
	lastShown widgetShown
	nextSeen  time.Time
	index     int // position in room.conns; guarded by room.mu

	resolving atomic.Bool // a token fetch is under way
	rebound   atomic.Bool // a new ticket: the rank floor no longer applies
	done      atomic.Bool // ready or gone: no more position events
}

func newConn(nc net.Conn) *conn {
	c := &conn{nc: nc, hbSlot: uint8(rand.IntN(heartbeatSlots))}
	if sc, ok := nc.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			c.raw = raw
			// A peer that died without a word (no FIN) is found when a
			// heartbeat stays unacknowledged this long, not after TCP's
			// retransmissions (about 15 min): far back in the line, writes
			// are too few to fill its socket and get it dropped.
			raw.Control(func(fd uintptr) {
				syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, tcpUserTimeout, int(peerSilence.Milliseconds()))
			})
		}
	}
	return c
}

// write sends one chunk holding payload. It never blocks: a socket that
// cannot take the whole chunk at once fails with errSlow.
func (c *conn) write(payload []byte) error {
	return c.writeFramed(chunk(payload))
}

// writeFramed sends bytes already framed as a chunk (see appendChunk).
func (c *conn) writeFramed(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return net.ErrClosed
	}
	return c.writeLocked(b)
}

func (c *conn) writeLocked(b []byte) error {
	if c.raw == nil {
		c.nc.SetWriteDeadline(time.Now().Add(fallbackWriteTimeout))
		_, err := c.nc.Write(b)
		return err
	}
	var n int
	var werr error
	err := c.raw.Write(func(fd uintptr) bool {
		n, werr = syscall.Write(int(fd), b)
		return true // never wait for the socket to drain
	})
	switch {
	case err != nil:
		return err
	case errors.Is(werr, syscall.EAGAIN):
		return errSlow
	case werr != nil:
		return werr
	case n != len(b):
		return errSlow
	}
	return nil
}

// peerGone reports whether the client closed its side (or reset it): a
// read that would not wait finds the end of the stream. It consumes
// nothing. A connection without a file descriptor is never found gone.
func (c *conn) peerGone() bool {
	if c.raw == nil {
		return false
	}
	gone := false
	var b [1]byte
	c.raw.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		gone = (n == 0 && err == nil) || (err != nil && !errors.Is(err, syscall.EAGAIN))
		return true // never wait
	})
	return gone
}

// close closes the connection once and reports whether this call did.
func (c *conn) close() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.closed = true
	c.nc.Close()
	return true
}

// chunk frames payload for HTTP/1.1 chunked transfer encoding.
func chunk(payload []byte) []byte {
	b := make([]byte, 0, len(payload)+12)
	b = strconv.AppendInt(b, int64(len(payload)), 16)
	b = append(b, '\r', '\n')
	b = append(b, payload...)
	return append(b, '\r', '\n')
}

// appendChunk appends one chunk whose payload body writes, without copying
// the payload: the size line is reserved first and filled in after.
func appendChunk(b []byte, body func([]byte) []byte) []byte {
	const sizeLen = 4 // hex digits reserved; an event is far below 64 KiB
	start := len(b)
	b = append(b, "0000\r\n"...)
	b = body(b)
	n := len(b) - start - sizeLen - 2
	if n >= 1<<16 {
		// Too big for the reserved digits: frame it the slow way.
		payload := append([]byte(nil), b[start+sizeLen+2:]...)
		return append(b[:start], chunk(payload)...)
	}
	const hex = "0123456789abcdef"
	for i := sizeLen - 1; i >= 0; i-- {
		b[start+i] = hex[n&0xf]
		n >>= 4
	}
	return append(b, '\r', '\n')
}

// lineLabel names the line of index index.
type lineLabel struct {
	index int
	name  string
}

// line returns the name of the line of ticket (a queue.LineTicket), ""
// for none, or when the visitor's line changed since ticket was read.
func (c *conn) line(ticket int64) string {
	l := c.lineName.Load()
	if line, _ := queue.SplitLineTicket(ticket); l != nil && l.index == line {
		return l.name
	}
	return ""
}

// setLine sets the name of the visitor's line of index index ("" for
// none).
func (c *conn) setLine(index int, name string) {
	if name == "" {
		c.lineName.Store(nil)
		return
	}
	c.lineName.Store(&lineLabel{index, name})
}
