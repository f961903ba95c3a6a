package request

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// OverTLS reports whether r came over TLS, to this server or to a
// trusted proxy that says so.
func OverTLS(r *http.Request, trusted []netip.Prefix) bool {
	if r.TLS != nil {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && IsTrusted(addr, trusted) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// HostName returns the host name of host[:port], without the brackets of
// an IPv6 address.
func HostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
}

// ValidHost reports whether h looks like a host[:port] (a name, an IPv4
// address or a bracketed IPv6 address), so that a forged Host header can
// put nothing else into a page.
func ValidHost(h string) bool {
	if h == "" || len(h) > 260 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == ':' || c == '[' || c == ']') {
			return false
		}
	}
	return true
}
