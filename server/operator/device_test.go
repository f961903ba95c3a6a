package operator

import (
	"strings"
	"testing"
	"time"
)

// TestDeviceCookie: a device cookie verifies for its own operator within
// DeviceTTL, and for nothing else.
func TestDeviceCookie(t *testing.T) {
	d, err := NewDevices([]byte("a secret of the deployment"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewDevices([]byte("another deployment's secret"))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	good := d.Issue("alice", at)
	id, ok := d.Verify(good, "alice", at)
	if !ok || id == "" {
		t.Fatalf("a fresh cookie: %q %v", id, ok)
	}
	if again := d.Issue("alice", at); again == good {
		t.Fatal("two cookies alike")
	}
	flip := []byte(good)
	flip[len(flip)-2] ^= 1
	for _, c := range []struct {
		what, value, name string
		now               time.Time
		ok                bool
	}{
		{"a day later", good, "alice", at.Add(24 * time.Hour), true},
		{"just before it expires", good, "alice", at.Add(DeviceTTL - time.Second), true},
		{"expired", good, "alice", at.Add(DeviceTTL), false},
		{"issued in the future", good, "alice", at.Add(-time.Hour), false},
		{"another operator", good, "bob", at, false},
		{"another key", other.Issue("alice", at), "alice", at, false},
		{"a changed MAC", string(flip), "alice", at, false},
		{"renamed", strings.Replace(good, "alice", "alicf", 1), "alicf", at, false},
		{"empty", "", "alice", at, false},
		{"no MAC", "alice:1:x", "alice", at, false},
		{"too long", good + strings.Repeat("A", deviceMax), "alice", at, false},
	} {
		if _, ok := d.Verify(c.value, c.name, c.now); ok != c.ok {
			t.Errorf("%s: ok %v, want %v", c.what, ok, c.ok)
		}
	}
	if _, err := NewDevices(nil); err == nil {
		t.Fatal("an empty secret was taken")
	}
}
