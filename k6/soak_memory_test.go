package k6

import "testing"

// TestSettled: the RSS has settled once a collection frees less than 1 MiB
// a server; a first reading never has.
func TestSettled(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name      string
		last, rss float64
		servers   int
		want      bool
	}{
		{"first reading", -1, 50 * mib, 1, false},
		{"fell 20 MiB", 55 * mib, 35 * mib, 1, false},
		{"fell half a MiB", 29.5 * mib, 29 * mib, 1, true},
		{"grew", 29 * mib, 30 * mib, 1, true},
		{"six servers, 5 MiB in all", 180 * mib, 175 * mib, 6, true},
		{"six servers, 7 MiB in all", 180 * mib, 173 * mib, 6, false},
	}
	for _, tt := range tests {
		if got := settled(tt.last, tt.rss, tt.servers); got != tt.want {
			t.Errorf("%s: settled = %v, want %v", tt.name, got, tt.want)
		}
	}
}
