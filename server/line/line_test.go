package line

import (
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"", true},
		{"presale", true},
		{"VIP_fans-2026", true},
		{strings.Repeat("a", MaxNameLen), true},
		{strings.Repeat("a", MaxNameLen+1), false},
		{"pre sale", false},
		{"프리세일", false},
		{"a/b", false},
	} {
		if got := ValidName(c.name); got != c.ok {
			t.Errorf("ValidName(%q) = %v, want %v", c.name, got, c.ok)
		}
	}
}
