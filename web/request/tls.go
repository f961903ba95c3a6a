package request

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// OverTLS reports whether r came over TLS, to this server or to a proxy
// of trusted that says so (X-Forwarded-Proto: https).
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
