package e2e

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"waitingroom/server/config"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// TestMetricsArePrivate: /metrics answers on METRICS_ADDR only, not on the
// public port, and a METRICS_ADDR already taken stops the start-up with an
// error naming it.
func TestMetricsArePrivate(t *testing.T) {
	base, _, _ := startServer(t, time.Second)
	for _, tt := range []struct {
		url    string
		status int
		want   string
	}{
		{base + "/metrics", 404, "There is nothing here"},
		{metricsURL(base), 200, "waitingroom_page_requests_total"},
	} {
		resp, err := http.Get(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.want) {
			t.Fatalf("%s: %d, want %d with %q", tt.url, resp.StatusCode, tt.status, tt.want)
		}
	}

	addrTakenStops(t, "METRICS_ADDR", func(taken string) []string { return []string{"-metrics-addr", taken} })
}

// addrTakenStops starts the server with args(an address already taken)
// and wants the start-up to stop with an error naming setting and that
// address.
func addrTakenStops(t *testing.T, setting string, args func(taken string) []string) {
	t.Helper()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(args(taken.Addr().String()), func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	err = serve(context.Background(), cfg, ln, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil || !strings.Contains(err.Error(), setting+" "+taken.Addr().String()) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("start-up with %s taken: %v", setting, err)
	}
}

// TestNeverReadingClientIsCut pipelines requests on one connection and
// never reads the answers: once the socket buffers are full, the server's
// write waits at most WRITE_TIMEOUT, then the connection is closed.
// Without a write timeout the connection (and its goroutine) is held
// forever.
func TestNeverReadingClientIsCut(t *testing.T) {
	base, eng, rdb := startServer(t, time.Second, "-write-timeout", "1s")
	name := servicetest.RoomName(t, rdb)
	if err := eng.SaveRoom(context.Background(), name, room.Defaults(name)); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := []byte("GET /r/" + name + " HTTP/1.1\r\nHost: x\r\n\r\n")
	batch := []byte(strings.Repeat(string(req), 100))
	start := time.Now()
	c.SetWriteDeadline(start.Add(15 * time.Second))
	for {
		if _, err = c.Write(batch); err != nil {
			break
		}
	}
	took := time.Since(start)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server still held the never-reading connection after %v", took.Round(time.Millisecond))
	}
	t.Logf("the server cut the never-reading connection after %v: %v", took.Round(time.Millisecond), err)
}

// TestSSEOutlivesTheWriteTimeout: streams are hijacked and keep their own
// deadlines, so a stream lives on past WRITE_TIMEOUT and gets its ready
// event.
func TestSSEOutlivesTheWriteTimeout(t *testing.T) {
	base, eng, rdb := startServer(t, 250*time.Millisecond, "-write-timeout", "1s")
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Paused = true
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(base + "/r/" + name + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	time.Sleep(2500 * time.Millisecond) // well past the write timeout
	set.Paused = false
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the stream ended before its ready event")
			}
			if l == "event: ready" {
				return
			}
		case <-timeout:
			t.Fatal("no ready event within 10 s")
		}
	}
}

// TestIdleConnsPerIPOnTheServer: connections of one client that carry no
// request, whether kept alive after one or never sending any, are capped
// at IDLE_CONNS_PER_IP on the real server: the oldest are closed.
func TestIdleConnsPerIPOnTheServer(t *testing.T) {
	const idleCap = 4
	base, _, _ := startServer(t, time.Second, "-idle-conns-per-ip", "4")
	for _, tt := range []struct {
		name    string
		request bool
	}{
		{"kept alive after a request", true},
		{"silent, never a request", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var conns []net.Conn
			for range 30 {
				c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if tt.request {
					c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
					resp, err := http.ReadResponse(bufio.NewReader(c), nil)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
				}
				conns = append(conns, c)
			}
			time.Sleep(100 * time.Millisecond)
			alive := 0
			for _, c := range conns {
				c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				if _, err := c.Read(make([]byte, 1)); errors.Is(err, os.ErrDeadlineExceeded) {
					alive++
				}
			}
			if alive != idleCap {
				t.Fatalf("%d of 30 connections from one address left open, want the cap, %d", alive, idleCap)
			}
		})
	}
}

// TestNetHTTPAnswers pins the answers net/http writes itself, which the
// README lists: 431 for headers over 16 KiB, and a closed connection,
// without an answer, for headers that take over 5 s.
func TestNetHTTPAnswers(t *testing.T) {
	base, _, _ := startServer(t, time.Second)
	addr := strings.TrimPrefix(base, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 20<<10) + "\r\n\r\n"))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("20 KiB of headers: %v %v, want 431", resp, err)
	}

	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	start := time.Now()
	slow.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n")) // and never the blank line
	slow.SetReadDeadline(start.Add(10 * time.Second))
	n, err := slow.Read(make([]byte, 1))
	if took := time.Since(start); n != 0 || errors.Is(err, os.ErrDeadlineExceeded) || took < 4*time.Second {
		t.Fatalf("slow headers: read %d bytes, %v after %v; want the connection closed after 5 s", n, err, took)
	}
}
