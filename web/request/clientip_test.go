package request

import "testing"

func TestClientNet(t *testing.T) {
	tests := []struct {
		host   string
		prefix int
		want   string
	}{
		{"203.0.113.7", 64, "203.0.113.7"},
		{"::ffff:203.0.113.7", 64, "203.0.113.7"},
		{"2001:db8:1:2:3:4:5:6", 64, "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", 64, "2001:db8:1:2::/64"},
		{"2001:db8:1:2:3:4:5:6", 56, "2001:db8:1::/56"},
		{"2001:db8:1:2:3:4:5:6", 128, "2001:db8:1:2:3:4:5:6/128"},
		{"fe80::1%eth0", 64, "fe80::/64"},
		{"not-an-address", 64, "not-an-address"},
	}
	for _, tt := range tests {
		if got := ClientNet(tt.host, tt.prefix); got != tt.want {
			t.Errorf("ClientNet(%q, %d) = %q, want %q", tt.host, tt.prefix, got, tt.want)
		}
	}
}
