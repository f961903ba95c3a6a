package web

import (
	"container/list"
	"net"
	"net/http"
	"net/netip"
	"sync"

	"waitingroom/web/request"
)

// idleConns caps the idle connections of each client network: kept alive
// after a request, or new and silent, with no request yet (http.Server's
// ConnState tells it every change). Once a network holds more than max
// idle ones, the one idle the longest is closed, so that one client cannot
// pin hundreds of file descriptors. A connection with a
// request under way is never touched, so a crowd behind one address is
// still served; it only reconnects more often. Connections from trusted
// proxies are not capped: nginx pools its own.
type idleConns struct {
	max      int
	v6Prefix int
	trusted  []netip.Prefix
	closed   func() // counts a connection closed by the cap

	mu    sync.Mutex
	idle  map[string]*list.List // client network → idle conns, oldest first
	where map[net.Conn]*list.Element
	// keys are the open connections' client networks, worked out once a
	// connection rather than at each of its requests.
	keys map[net.Conn]connKey
}

// connKey is a connection's client network, and whether its idle time is
// capped (not for a trusted proxy).
type connKey struct {
	key    string
	capped bool
}

type idleConn struct {
	c   net.Conn
	key string
}

func newIdleConns(max, v6Prefix int, trusted []netip.Prefix, closed func()) *idleConns {
	return &idleConns{max: max, v6Prefix: v6Prefix, trusted: trusted, closed: closed,
		idle: map[string]*list.List{}, where: map[net.Conn]*list.Element{}, keys: map[net.Conn]connKey{}}
}

// connState follows one connection's state change.
func (l *idleConns) connState(c net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew, http.StateIdle:
	case http.StateActive:
		l.forget(c, false)
		return
	default: // closed or hijacked: gone for good
		l.forget(c, true)
		return
	}
	l.mu.Lock()
	k, seen := l.keys[c]
	if !seen {
		l.mu.Unlock()
		key, capped := l.key(c)
		k = connKey{key: key, capped: capped}
		l.mu.Lock()
		l.keys[c] = k
	}
	if !k.capped {
		l.mu.Unlock()
		return
	}
	key := k.key
	q := l.idle[key]
	if q == nil {
		q = list.New()
		l.idle[key] = q
	}
	if _, known := l.where[c]; !known {
		l.where[c] = q.PushBack(idleConn{c: c, key: key})
	}
	var evict net.Conn
	if q.Len() > l.max {
		oldest := q.Remove(q.Front()).(idleConn)
		delete(l.where, oldest.c)
		evict = oldest.c
	}
	l.mu.Unlock()
	if evict != nil {
		evict.Close() // its server goroutine sees the close and ends
		l.closed()
	}
}

// forget drops c from the idle lists: it is busy again, or gone (hijacked
// or closed), and then forgotten altogether.
func (l *idleConns) forget(c net.Conn, gone bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if gone {
		delete(l.keys, c)
	}
	e, ok := l.where[c]
	if !ok {
		return
	}
	delete(l.where, c)
	key := e.Value.(idleConn).key
	q := l.idle[key]
	q.Remove(e)
	if q.Len() == 0 {
		delete(l.idle, key)
	}
}

// key returns the client network of c, and false for a trusted proxy.
func (l *idleConns) key(c net.Conn) (string, bool) {
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return c.RemoteAddr().String(), true
	}
	if request.IsTrusted(ap.Addr(), l.trusted) {
		return "", false
	}
	return request.ClientNet(ap.Addr().String(), l.v6Prefix), true
}
