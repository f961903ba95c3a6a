// Package request reads what a request brings: the client's address and
// network behind trusted proxies and whether it came over TLS, the signed
// visitor cookie, a bounded JSON body, the attribution of the link it came
// by and the Last-Event-ID of a reconnecting stream.
package request

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientIP returns the address a request came from. Behind a trusted proxy
// (its address is in trusted), it walks X-Forwarded-For from the right and
// returns the first address that is not a trusted proxy; a client cannot
// spoof it by sending the header itself.
func ClientIP(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil || !IsTrusted(addr, trusted) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if !IsTrusted(hop, trusted) {
			return hop.Unmap().String()
		}
	}
	return host
}

// IsTrusted reports whether a (an IPv4 address mapped into IPv6 counts as
// itself) is in one of the trusted prefixes.
func IsTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	a = a.Unmap()
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientNet returns the network that per-client caps count as one client:
// an IPv4 address itself, or the /v6Prefix network of an IPv6 address (a
// subscriber is given a whole /64, so a cap per IPv6 address caps nothing).
// A host that is no address is returned as it is.
func ClientNet(host string, v6Prefix int) string {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.WithZone("").Unmap()
	if a.Is4() {
		return a.String()
	}
	p, err := a.Prefix(v6Prefix)
	if err != nil {
		return a.String()
	}
	return p.String()
}
