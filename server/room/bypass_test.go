package room

import (
	"errors"
	"strconv"
	"testing"
)

// TestBypassValidate: staff networks are CIDR prefixes, at most 20, none
// wider than /16 (IPv4) or /32 (IPv6).
func TestBypassValidate(t *testing.T) {
	many := make([]string, MaxStaffNetworks+1)
	for i := range many {
		many[i] = "10." + strconv.Itoa(i) + ".0.0/16"
	}
	cases := []struct {
		name string
		nets []string
		ok   bool
	}{
		{"none", nil, true},
		{"an office and a VPN", []string{"203.0.113.0/24", "2001:db8:1::/48", "198.51.100.7/32"}, true},
		{"an address without a prefix", []string{"203.0.113.7"}, false},
		{"not a network", []string{"office"}, false},
		{"everyone", []string{"0.0.0.0/0"}, false},
		{"a /8", []string{"10.0.0.0/8"}, false},
		{"a wide IPv6 prefix", []string{"2001:db8::/16"}, false},
		{"an IPv4 network written as IPv6", []string{"::ffff:203.0.113.0/120"}, true},
		{"an IPv4 /8 written as IPv6", []string{"::ffff:10.0.0.0/104"}, false},
		{"a short IPv4-mapped prefix: an IPv6 range wider than /32", []string{"::ffff:0.0.0.0/16"}, false},
		{"too many", many, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Bypass{StaffNetworks: c.nets}.Validate()
			var fe *FieldError
			if c.ok != (err == nil) || !c.ok && (!errors.As(err, &fe) || fe.Field != "staffNetworks") {
				t.Fatalf("Validate: %v, want ok %v", err, c.ok)
			}
		})
	}
	if got := (Bypass{StaffNetworks: []string{"203.0.113.9/24", "::ffff:198.51.100.0/120"}}).StaffPrefixes(); len(got) != 2 || got[0].String() != "203.0.113.0/24" || got[1].String() != "198.51.100.0/24" {
		t.Fatalf("StaffPrefixes: %v", got)
	}
}
