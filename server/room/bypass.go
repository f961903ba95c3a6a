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
			out = append(out, p.Masked())
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
		if p.Addr().Is4In6() {
			// The client's address is compared unmapped: such a prefix
			// would match nobody, or, short, every IPv6 address.
			return fieldError("staffNetworks", "staffNetworks: %s is an IPv4 network written as IPv6; write it as IPv4, such as 203.0.113.0/24", n)
		}
		if min := staffMinBits(p.Addr()); p.Bits() < min {
			return fieldError("staffNetworks", "staffNetworks: %s is wider than /%d, which would let the public through", n, min)
		}
	}
	return nil
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
