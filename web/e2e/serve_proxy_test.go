package e2e

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"waitingroom/server/config"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// TestProxyAddrTaken: a PROXY_ADDR already taken stops the start-up with
// an error naming it.
func TestProxyAddrTaken(t *testing.T) {
	addrTakenStops(t, "PROXY_ADDR", func(taken string) []string {
		return []string{"-metrics-addr", "127.0.0.1:0", "-origin-url", "http://127.0.0.1:1", "-proxy-addr", taken}
	})
}

// TestProxyListener: with ORIGIN_URL and PROXY_ADDR the server serves the
// shop on a second port, passes its pages through, and sends a request to
// a room's protect prefix without a session to the room, on the main
// port.
func TestProxyListener(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "shop:"+r.URL.Path)
	}))
	t.Cleanup(origin.Close)
	proxyAddr := freeAddr(t)
	base, eng, rdb := startServer(t, time.Second, "-origin-url", origin.URL, "-proxy-addr", proxyAddr)
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Gate.TargetURL = "http://" + proxyAddr + "/checkout"
	set.Gate.Protect = []string{"/checkout"}
	if err := eng.SaveRoom(context.Background(), name, set); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := client.Get("http://" + proxyAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	if resp, body := get("/products"); resp.StatusCode != 200 || body != "shop:/products" {
		t.Fatalf("an unprotected page: %d %s", resp.StatusCode, body)
	}
	deadline := time.Now().Add(10 * time.Second) // the prefixes are read every 2 s
	for {
		resp, body := get("/checkout")
		if resp.StatusCode == http.StatusSeeOther {
			if loc := resp.Header.Get("Location"); loc != base+"/r/"+name {
				t.Fatalf("sent to %q, want %q", loc, base+"/r/"+name)
			}
			break
		}
		if resp.StatusCode != 200 || time.Now().After(deadline) {
			t.Fatalf("the protected page: %d %s", resp.StatusCode, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestProxyShutsDownGracefully: at shutdown a request under way through
// the proxy finishes, then the proxy's port is closed and serve returns.
func TestProxyShutsDownGracefully(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(arrived)
			<-release
		}
		io.WriteString(w, "shop:"+r.URL.Path)
	}))
	t.Cleanup(origin.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proxyAddr := freeAddr(t)
	cfg, err := config.Parse([]string{"-metrics-addr", "127.0.0.1:0", "-origin-url", origin.URL, "-proxy-addr", proxyAddr},
		func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, ln, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	waitHealthy(t, "http://"+ln.Addr().String())

	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + proxyAddr + "/slow")
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	select {
	case <-arrived:
	case <-time.After(5 * time.Second):
		t.Fatal("the request never reached the origin")
	}
	cancel()
	time.Sleep(200 * time.Millisecond) // the shutdown is under way
	close(release)
	if b := <-got; b != "shop:/slow" {
		t.Fatalf("the request under way at shutdown got %q", b)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not return")
	}
	if c, err := net.DialTimeout("tcp", proxyAddr, time.Second); err == nil {
		c.Close()
		t.Fatal("the proxy's port still accepts connections after the shutdown")
	}
}
