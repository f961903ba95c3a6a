package room

import (
	"net/netip"
	"strings"
)

// Bypass is who skips the room's line: staff on the shop's own networks
// are let in at once, outside the line. A bypass never takes a buyer's
// place or the rate's credit, and never a slot past maxActive.
type Bypass struct {
	// StaffNetworks are the CIDR prefixes ("203.0.113.0/24",
	// "2001:db8:1::/48") whose joins pass straight through.
	StaffNetworks []string `json:"staffNetworks"`
}

// Limits on the staff networks: how many, and the widest prefix of each
// family (a wider one would let the public through).
const (
	MaxStaffNetworks = 20
	MinStaffBitsV4   = 16
	MinStaffBitsV6   = 32
)

// StaffPrefixes returns the staff networks parsed; those that do not
// parse (never saved: Validate refuses them) are left out.
func (b Bypass) StaffPrefixes() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(b.StaffNetworks))
	for _, n := range b.StaffNetworks {
		if p, err := netip.ParsePrefix(strings.TrimSpace(n)); err == nil {
			out = append(out, unmapped(p).Masked())
		}
	}
	return out
}

// Validate returns an error that names the field.
func (b Bypass) Validate() error {
	if len(b.StaffNetworks) > MaxStaffNetworks {
		return fieldError("staffNetworks", "staffNetworks holds at most %d networks", MaxStaffNetworks)
	}
	for _, n := range b.StaffNetworks {
		p, err := netip.ParsePrefix(n)
		if err != nil {
			return fieldError("staffNetworks", "staffNetworks: %q is not a network such as 203.0.113.0/24 or 2001:db8::/48", n)
		}
		// An IPv4 network written as IPv6 is held to IPv4's bound;
		// shorter than /96 it is an IPv6 range, held to IPv6's.
		if p = unmapped(p); p.Bits() < staffMinBits(p.Addr()) {
			min := staffMinBits(p.Addr())
			return fieldError("staffNetworks", "staffNetworks: %s is wider than /%d, which would let the public through", n, min)
		}
	}
	return nil
}

// unmapped returns p as IPv4 when it is an IPv4 network written as
// IPv6 (::ffff:203.0.113.0/120 is 203.0.113.0/24): clients' addresses are
// compared unmapped.
func unmapped(p netip.Prefix) netip.Prefix {
	if !p.Addr().Is4In6() || p.Bits() < 96 {
		return p
	}
	return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
}

func staffMinBits(a netip.Addr) int {
	if a.Is4() {
		return MinStaffBitsV4
	}
	return MinStaffBitsV6
}

// BypassPatch is a partial update of Bypass: nil keeps it.
type BypassPatch struct {
	StaffNetworks *[]string `json:"staffNetworks"`
}

func (p BypassPatch) apply(b Bypass) Bypass {
	set(&b.StaffNetworks, p.StaffNetworks)
	return b
}
