package k6

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// rawStream is a lean SSE client: one goroutine and one 4 KiB buffer per
// connection, reading the server's chunked stream straight off the socket.
// On a 2-core machine the load generator shares the cores with the server,
// so a heavy client would measure itself; the r3labs client remains the
// default elsewhere (and with -client r3labs here).
type rawStream struct {
	addr, host, path string
	local            *net.TCPAddr
	cookie           string
	lastID           int64
}

func newRawStream(base, room string, local *net.TCPAddr) (*rawStream, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, errors.New("raw client: http only")
	}
	return &rawStream{addr: u.Host, host: u.Host, path: "/r/" + url.PathEscape(room) + "/events", local: local}, nil
}

// run connects, and reconnects after a drop with the visitor's cookie and
// Last-Event-ID, until ctx ends. onHeaders is told of each connect (first
// or not); onEvent gets each event's id, name and data.
func (s *rawStream) run(ctx context.Context, onHeaders func(first bool, took time.Duration, err error), onEvent func(id int64, name, data []byte)) {
	first := true
	for ctx.Err() == nil {
		began := time.Now()
		err := s.once(ctx, func() {
			onHeaders(first, time.Since(began), nil)
			first = false
		}, onEvent)
		if ctx.Err() != nil {
			return
		}
		if first {
			onHeaders(true, 0, err)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second + rand.N(time.Second)):
		}
	}
}

func (s *rawStream) once(ctx context.Context, connected func(), onEvent func(id int64, name, data []byte)) error {
	d := net.Dialer{LocalAddr: s.local, Timeout: 10 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	var req strings.Builder
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n", s.path, s.host)
	if s.cookie != "" {
		fmt.Fprintf(&req, "Cookie: %s\r\n", s.cookie)
	}
	if s.lastID > 0 {
		fmt.Fprintf(&req, "Last-Event-ID: %d\r\n", s.lastID)
	}
	req.WriteString("\r\n")
	if _, err := nc.Write([]byte(req.String())); err != nil {
		return err
	}
	br := bufio.NewReaderSize(nc, 4096)
	status, err := br.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(status, "HTTP/1.1 200") {
		return fmt.Errorf("status %q", strings.TrimSpace(status))
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Set-Cookie: "); ok {
			s.cookie, _, _ = strings.Cut(v, ";")
		}
	}
	connected()
	// Chunked body: size line, payload, CRLF. Each payload is one or more
	// whole SSE blocks.
	for {
		sizeLine, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(sizeLine)), 16, 64)
		if err != nil || n < 0 || n > 1<<20 {
			return fmt.Errorf("bad chunk size %q", sizeLine)
		}
		if n == 0 {
			return errors.New("stream ended")
		}
		payload := make([]byte, n+2)
		if _, err := ioReadFull(br, payload); err != nil {
			return err
		}
		for _, block := range bytes.Split(payload[:n], []byte("\n\n")) {
			var id int64
			var name, data []byte
			for _, l := range bytes.Split(block, []byte("\n")) {
				switch {
				case bytes.HasPrefix(l, []byte("id: ")):
					id, _ = strconv.ParseInt(string(l[4:]), 10, 64)
				case bytes.HasPrefix(l, []byte("event: ")):
					name = l[7:]
				case bytes.HasPrefix(l, []byte("data: ")):
					data = l[6:]
				}
			}
			if data != nil && string(name) != "beat" { // a beat only says the stream lives
				if id > 0 {
					s.lastID = id
				}
				onEvent(id, name, data)
			}
		}
	}
}

func ioReadFull(br *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := br.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
