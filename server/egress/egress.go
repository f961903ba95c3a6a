// Package egress is the rule for the addresses the server fetches from
// (a room's healthURL, the gate's origin): never a link-local address,
// a cloud metadata address, an unspecified or a multicast one, in any
// form (IPv4-mapped IPv6, the legacy decimal and hexadecimal IPv4
// forms). Loopback and private networks stay allowed: a shop's health
// endpoint is usually internal.
//
// The rule holds twice: CheckHost at validation, for a clear error, and
// Control in the dialer, against every address a name resolves to (DNS
// rebinding) and every redirect.
package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
)

// ErrRefused is the error of every refused address: errors.Is finds it
// in a *RefusedError.
var ErrRefused = errors.New("the server never fetches from this address")

// RefusedError is a refused host or address, and why.
type RefusedError struct {
	Host   string // as given: a name, an address, a legacy IPv4 form
	Addr   string // the address it reads as, when it differs from Host
	Reason string // "a link-local/metadata address", …
}

func (e *RefusedError) Error() string {
	if e.Addr != "" {
		return e.Host + " reads as " + e.Addr + ", " + e.Reason + ": " + ErrRefused.Error()
	}
	return e.Host + " is " + e.Reason + ": " + ErrRefused.Error()
}

// Is reports ErrRefused.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// metadataAddrs are the clouds' instance metadata services outside the
// link-local networks (169.254.169.254 is link-local).
var metadataAddrs = map[netip.Addr]string{
	netip.MustParseAddr("fd00:ec2::254"):   "a metadata address (AWS, IPv6)",
	netip.MustParseAddr("100.100.100.200"): "a metadata address (Alibaba Cloud)",
}

// metadataNames are host names of metadata services; their addresses
// are refused anyway, the names are refused at validation to say why.
var metadataNames = []string{"metadata.google.internal", "metadata.goog", "metadata.azure.com", "instance-data.ec2.internal"}

// CheckAddr returns an error saying why the server must not connect to
// a, or nil.
func CheckAddr(a netip.Addr) error {
	if why := refused(a); why != "" {
		return &RefusedError{Host: a.Unmap().String(), Reason: why}
	}
	return nil
}

// refused says what kind of refused address a is, or "".
func refused(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "not an address"
	case metadataAddrs[a] != "":
		return metadataAddrs[a]
	case a.IsLinkLocalUnicast():
		return "a link-local/metadata address"
	case a.IsUnspecified(), a.Is4() && a.As4()[0] == 0:
		return "an unspecified address"
	case a.IsMulticast():
		return "a multicast address"
	case a.Is4() && a.As4() == [4]byte{255, 255, 255, 255}:
		return "the broadcast address"
	}
	return ""
}

// CheckHost checks a URL's host (a name, an IP literal, or a legacy IPv4
// form such as 2852039166 or 0xa9.0xfe.0xa9.0xfe, which some resolvers
// read as an address) without resolving it: Control checks the
// addresses a name resolves to when it is dialled.
func CheckHost(host string) error {
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if i := strings.IndexByte(h, '%'); i >= 0 {
		h = h[:i] // a zone: fe80::1%eth0
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return CheckAddr(a)
	}
	if a, ok := legacyIPv4(h); ok {
		if why := refused(a); why != "" {
			return &RefusedError{Host: host, Addr: a.String(), Reason: why}
		}
		return nil
	}
	for _, n := range metadataNames {
		if h == n {
			return &RefusedError{Host: host, Reason: "a metadata address"}
		}
	}
	return nil
}

// legacyIPv4 reads the inet_aton forms of an IPv4 address: one to four
// parts, each decimal, octal (leading 0) or hexadecimal (0x), the last
// filling the remaining bytes.
func legacyIPv4(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 || h == "" {
		return netip.Addr{}, false
	}
	var v []uint64
	for _, p := range parts {
		n, err := strconv.ParseUint(p, 0, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		v = append(v, n)
	}
	var ip uint64
	for i, n := range v[:len(v)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		ip |= n << (24 - 8*i)
	}
	last := v[len(v)-1]
	if last >= 1<<(8*(5-len(v))) {
		return netip.Addr{}, false
	}
	ip |= last
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

// Control is a net.Dialer's Control: it refuses to connect to an address
// that CheckAddr refuses. The dialer calls it with each resolved address,
// so a name that resolves to a refused address, and a redirect to one,
// never connect.
func Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		host, _, splitErr := net.SplitHostPort(address)
		if splitErr != nil {
			return fmt.Errorf("egress: dial %s %s: %w", network, address, splitErr)
		}
		a, parseErr := netip.ParseAddr(host)
		if parseErr != nil {
			return fmt.Errorf("egress: dial %s %s: %w", network, address, parseErr)
		}
		ap = netip.AddrPortFrom(a, 0)
	}
	if err := CheckAddr(ap.Addr()); err != nil {
		return fmt.Errorf("egress: dial %s: %w", address, err)
	}
	return nil
}
