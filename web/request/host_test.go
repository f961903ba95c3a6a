package request

import (
	"crypto/tls"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestHostName(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"shop.example", "shop.example"},
		{"shop.example:8443", "shop.example"},
		{"[::1]:8080", "::1"},
		{"[::1]", "::1"},
	} {
		if got := HostName(tt.in); got != tt.want {
			t.Errorf("HostName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestValidHost(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{"shop.example", true},
		{"shop.example:8443", true},
		{"[::1]:8080", true},
		{"", false},
		{"Shop.example", false}, // callers lower-case first
		{"shop.example/path", false},
		{"a\"b", false},
	} {
		if got := ValidHost(tt.in); got != tt.want {
			t.Errorf("ValidHost(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestOverTLS(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tt := range []struct {
		name, remote, proto string
		tls                 bool
		want                bool
	}{
		{"TLS to this server", "203.0.113.9:1", "", true, true},
		{"a trusted proxy's https", "10.1.2.3:1", "https", false, true},
		{"a trusted proxy's http", "10.1.2.3:1", "http", false, false},
		{"an untrusted client's header", "203.0.113.9:1", "https", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tt.remote
			if tt.proto != "" {
				r.Header.Set("X-Forwarded-Proto", tt.proto)
			}
			if tt.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if got := OverTLS(r, trusted); got != tt.want {
				t.Fatalf("OverTLS = %v, want %v", got, tt.want)
			}
		})
	}
}
