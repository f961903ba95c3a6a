package web

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// open reports whether the server still holds c: a read that times out
// means the connection is alive; EOF or a reset means it was closed.
func open(t *testing.T, c net.Conn) bool {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// TestIdleConnsPerClientAreCapped opens, on a real listener, many
// keep-alive connections from one address that each make one request and
// then sit idle: only the cap's newest stay open. A connection whose
// request is still under way is never cut, and completes.
func TestIdleConnsPerClientAreCapped(t *testing.T) {
	t.Parallel()
	const idleCap = 3
	h := newHarness(t, func(o *Options) { o.IdleConnsPerIP = idleCap })
	srv := httptest.NewUnstartedServer(h.web.Handler())
	// The server marks a connection idle just after its answer, so a
	// client can be a few connections ahead of it: wait for each mark, so
	// that "oldest" means the same to both.
	idled := make(chan struct{}, 64)
	active := make(chan struct{}, 64)
	srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		h.web.ConnState(c, st)
		switch st {
		case http.StateIdle:
			idled <- struct{}{}
		case http.StateActive:
			active <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	// A slow enter: half its body is sent, so its request is under way.
	busy := dial()
	busy.Write([]byte("POST /api/rooms/" + h.room + "/queue HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{"))
	// On a loaded machine the server may not have read it yet: until it
	// has, the connection is new, not under way (this test once failed so).
	select {
	case <-active:
	case <-time.After(5 * time.Second):
		t.Fatal("the slow enter never got under way")
	}

	var conns []net.Conn
	for i := range 20 {
		c := dial()
		br := bufio.NewReader(c)
		c.Write([]byte("GET /robots.txt HTTP/1.1\r\nHost: x\r\n\r\n"))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		resp.Body.Close()
		select {
		case <-idled:
		case <-time.After(5 * time.Second):
			t.Fatalf("connection %d never went idle", i)
		}
		conns = append(conns, c)
	}
	var alive []int
	for i, c := range conns {
		if open(t, c) {
			alive = append(alive, i)
		}
	}
	if len(alive) != idleCap || alive[0] != len(conns)-idleCap {
		t.Fatalf("idle connections left open: %v, want the %d newest", alive, idleCap)
	}

	busy.Write([]byte("}"))
	busy.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the request under way was cut: %v %v", resp, err)
	}
	resp.Body.Close()
}

// fakeConn is a connection from a given address, for the idle cap's
// bookkeeping.
type fakeConn struct {
	net.Conn
	from   net.Addr
	closed atomic.Bool
}

func (f *fakeConn) RemoteAddr() net.Addr { return f.from }
func (f *fakeConn) Close() error         { f.closed.Store(true); return nil }

func fake(addr string) *fakeConn {
	return &fakeConn{from: net.TCPAddrFromAddrPort(netip.MustParseAddrPort(addr))}
}

// TestIdleConnsCapAnIPv6Network: the idle cap counts a /64 as one client;
// another /64 and trusted proxies are not touched, and a connection that
// became busy again leaves the count.
func TestIdleConnsCapAnIPv6Network(t *testing.T) {
	t.Parallel()
	var cut atomic.Int64
	l := newIdleConns(2, 64, []netip.Prefix{netip.MustParsePrefix("10.0.0.1/32")}, func() { cut.Add(1) })
	var same []*fakeConn
	for _, a := range []string{"[2001:db8:1:2::1]:1000", "[2001:db8:1:2::2]:1000", "[2001:db8:1:2:aaaa::3]:1000", "[2001:db8:1:2::4]:1000"} {
		c := fake(a)
		l.connState(c, http.StateNew)
		l.connState(c, http.StateActive)
		l.connState(c, http.StateIdle)
		same = append(same, c)
	}
	if !same[0].closed.Load() || !same[1].closed.Load() || same[2].closed.Load() || same[3].closed.Load() {
		t.Fatalf("closed %v %v %v %v, want the two oldest of the /64", same[0].closed.Load(), same[1].closed.Load(), same[2].closed.Load(), same[3].closed.Load())
	}
	if n := l.count("2001:db8:1:2::/64"); n != 2 {
		t.Fatalf("%d idle in the /64, want 2", n)
	}
	// One goes busy again: it no longer counts, and a new idle one fits.
	l.connState(same[2], http.StateActive)
	other := fake("[2001:db8:1:2::5]:1000")
	l.connState(other, http.StateIdle)
	if same[3].closed.Load() || other.closed.Load() {
		t.Fatal("a busy connection was counted as idle")
	}
	for i := range 5 {
		l.connState(fake("[2001:db8:1:3::1]:"+string(rune('1'+i))+"000"), http.StateIdle)
		l.connState(fake("10.0.0.1:"+string(rune('1'+i))+"000"), http.StateIdle)
	}
	if got := cut.Load(); got != 2+3 {
		t.Fatalf("%d connections cut, want 2 in the first /64 and 3 in the second; none from the proxy", got)
	}
	for _, c := range append(same, other) {
		l.connState(c, http.StateClosed)
	}
	if n := l.count("2001:db8:1:2::/64"); n != 0 || len(l.where) != 2 {
		t.Fatalf("closed connections still tracked: %d in the /64, %d in all", n, len(l.where))
	}
	// Each open connection's network is remembered once; a closed one's
	// is forgotten: the five of the second /64 and the proxy's five stay.
	if len(l.keys) != 10 {
		t.Fatalf("%d connections' networks remembered, want the 10 still open", len(l.keys))
	}
}

// count returns how many idle connections key holds.
func (l *idleConns) count(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if q := l.idle[key]; q != nil {
		return q.Len()
	}
	return 0
}
