package web

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// getWithHost fetches path from h's server with the Host header host.
func getWithHost(t *testing.T, h *harness, path, host string) reply {
	t.Helper()
	req, err := http.NewRequest("GET", h.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// TestRequestOrigin: without PUBLIC_URL, a request's host is trusted for
// a shared page's absolute URLs only when it is a loopback host (any
// port) or the host of one of ALLOWED_ORIGINS, which then gives the
// origin as configured; PUBLIC_URL always wins.
func TestRequestOrigin(t *testing.T) {
	t.Parallel()
	allowed := []string{"https://shop.example", "http://alias.example:8443", "https://alias.example"}
	plain := &Server{trustHosts: originsByHost(allowed)}
	public := &Server{publicURL: "https://queue.shop.example", trustHosts: originsByHost(allowed)}
	tests := []struct {
		name        string
		s           *Server
		host        string
		want        string
		wantTrusted bool
	}{
		{"forged host", plain, "evil.example", "http://evil.example", false},
		{"forged host and port", plain, "evil.example:8080", "http://evil.example:8080", false},
		{"localhost", plain, "localhost:1234", "http://localhost:1234", true},
		{"localhost without a port", plain, "localhost", "http://localhost", true},
		{"loopback IPv4", plain, "127.0.0.2:80", "http://127.0.0.2:80", true},
		{"loopback IPv6", plain, "[::1]:8080", "http://[::1]:8080", true},
		{"loopback IPv6 without a port", plain, "[::1]", "http://[::1]", true},
		{"another address", plain, "10.0.0.1:8080", "http://10.0.0.1:8080", false},
		{"a name under localhost's", plain, "localhost.evil.example", "http://localhost.evil.example", false},
		{"a name under a loopback address", plain, "127.0.0.1.evil.example", "http://127.0.0.1.evil.example", false},
		{"an allowed origin's host", plain, "shop.example", "https://shop.example", true},
		{"in capitals", plain, "SHOP.Example", "https://shop.example", true},
		{"with a forged port", plain, "shop.example:1234", "https://shop.example", true},
		{"an allowed origin's port", plain, "alias.example:8443", "http://alias.example:8443", true},
		{"the same name, another scheme's port", plain, "alias.example", "https://alias.example", true},
		{"the same name, another port", plain, "alias.example:9999", "http://alias.example:8443", true},
		{"a name under an allowed one", plain, "shop.example.evil.example", "http://shop.example.evil.example", false},
		{"not a host", plain, "evil.example/<x>", "http://localhost", false},
		{"PUBLIC_URL", public, "evil.example", "https://queue.shop.example", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/r/sale", nil)
			r.Host = tt.host
			got, trusted := tt.s.requestOrigin(r)
			if got != tt.want || trusted != tt.wantTrusted {
				t.Errorf("requestOrigin(Host %q) = %q, %v; want %q, %v", tt.host, got, trusted, tt.want, tt.wantTrusted)
			}
		})
	}
}

// TestForgedHostCannotPoisonPreviews: without PUBLIC_URL, a forged Host
// gets the room page without the tags that need an absolute URL, under
// one shared cache entry: it neither reaches the page a trusted host gets
// (a crawler's) nor grows the cache.
func TestForgedHostCannotPoisonPreviews(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.AllowedOrigins = []string{"https://shop.example"} })
	self := strings.TrimPrefix(h.srv.URL, "http://")
	absolute := []string{"og:url", "og:image", "og:image:width", "og:image:height", "og:image:alt", "twitter:image", "twitter:image:alt"}
	tests := []struct {
		name, host string
		want       string // the origin of og:url and og:image; "" for none
	}{
		{"forged host first", "evil.example", ""},
		{"forged host with a port", "evil.example:8443", ""},
		{"the server's own loopback host", self, h.srv.URL},
		{"localhost", "localhost:9", "http://localhost:9"},
		{"an allowed origin's host", "shop.example", "https://shop.example"},
		{"forged host again", "evil.example", ""},
		{"the allowed host with a forged port", "shop.example:666", "https://shop.example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := getWithHost(t, h, "/r/"+h.room, tt.host)
			if r.status != 200 {
				t.Fatalf("%d", r.status)
			}
			if got, ok := metaContent(r.body, "og:title"); !ok || got == "" {
				t.Errorf("og:title missing")
			}
			if tt.want == "" {
				for _, k := range absolute {
					if got, ok := metaContent(r.body, k); ok {
						t.Errorf("%s = %q on a page for Host %s", k, got, tt.host)
					}
				}
				if strings.Contains(r.body, tt.host) {
					t.Errorf("the page names the forged host %s", tt.host)
				}
				return
			}
			if got, _ := metaContent(r.body, "og:url"); got != tt.want+"/r/"+h.room {
				t.Errorf("og:url %q, want under %s", got, tt.want)
			}
			for _, k := range []string{"og:image", "twitter:image"} {
				if got, _ := metaContent(r.body, k); !strings.HasPrefix(got, tt.want+"/r/"+h.room+"/og/") {
					t.Errorf("%s %q, want under %s", k, got, tt.want)
				}
			}
		})
	}
	// Random hosts share one entry of the page cache.
	h.web.pages.mu.Lock()
	before := len(h.web.pages.pages)
	h.web.pages.mu.Unlock()
	for i := range 50 {
		getWithHost(t, h, "/r/"+h.room, fmt.Sprintf("random-%d.example", i))
	}
	h.web.pages.mu.Lock()
	after := len(h.web.pages.pages)
	h.web.pages.mu.Unlock()
	if after != before {
		t.Errorf("50 random hosts grew the page cache from %d to %d entries", before, after)
	}
}

// TestPublicURLUnsetWarns: a server without PUBLIC_URL says at start,
// once, that link previews carry absolute URLs only for loopback and
// ALLOWED_ORIGINS hosts.
func TestPublicURLUnsetWarns(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, publicURL string
		warns           bool
	}{
		{"unset", "", true},
		{"set", "https://queue.shop.example", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			newHarness(t, func(o *Options) {
				o.PublicURL = tt.publicURL
				o.Log = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
			})
			n := strings.Count(buf.String(), "PUBLIC_URL is unset")
			if tt.warns && (n != 1 || !strings.Contains(buf.String(), "level=WARN") || !strings.Contains(buf.String(), "ALLOWED_ORIGINS")) {
				t.Errorf("want one warning about PUBLIC_URL, got %d in:\n%s", n, buf.String())
			}
			if !tt.warns && n != 0 {
				t.Errorf("warned with PUBLIC_URL set:\n%s", buf.String())
			}
		})
	}
}
