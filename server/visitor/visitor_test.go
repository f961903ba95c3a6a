package visitor

import (
	"crypto/hmac"
	"crypto/sha256"
	"strings"
	"sync"
	"testing"
)

func TestSignVerify(t *testing.T) {
	s, err := NewSigner([]byte("0123456789abcdef0123"))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewSigner([]byte("another-secret-key-000"))
	id, err := NewID()
	if err != nil {
		t.Fatal(err)
	}
	good := s.Sign(id)
	tests := []struct {
		name   string
		value  string
		wantOK bool
	}{
		{"good", good, true},
		{"empty", "", false},
		{"no dot", id, false},
		{"bad mac", id + "." + strings.Repeat("A", 43), false},
		{"other key", other.Sign(id), false},
		{"truncated mac", good[:len(good)-1], false},
		{"short id", "abc." + s.mac("abc"), false},
		{"huge", strings.Repeat("a", 5000), false},
		{"swapped id", mustID(t) + good[IDLen:], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := s.Verify(tt.value)
			if ok != tt.wantOK {
				t.Fatalf("Verify(%q) ok = %v, want %v", tt.value, ok, tt.wantOK)
			}
			if ok && got != id {
				t.Fatalf("Verify returned id %q, want %q", got, id)
			}
		})
	}
}

func TestNewSignerRejectsShortKey(t *testing.T) {
	if _, err := NewSigner([]byte("short")); err == nil {
		t.Fatal("NewSigner accepted a 5-byte key")
	}
}

func mustID(t *testing.T) string {
	t.Helper()
	id, err := NewID()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// FuzzVerify checks that no cookie value crashes Verify and that only
// values produced by Sign are accepted.
func FuzzVerify(f *testing.F) {
	s, _ := NewSigner([]byte("0123456789abcdef0123"))
	f.Add(s.Sign("AAAAAAAAAAAAAAAAAAAAAA"))
	f.Add("")
	f.Add(".")
	f.Add("AAAAAAAAAAAAAAAAAAAAAA.")
	f.Add(strings.Repeat("x", 100))
	f.Fuzz(func(t *testing.T, v string) {
		id, ok := s.Verify(v)
		if ok && s.Sign(id) != v {
			t.Fatalf("Verify accepted %q, which Sign would not produce", v)
		}
	})
}

// TestSignIsTheHMAC: the reused HMAC states sign as a fresh HMAC under the
// key does, also from many goroutines at once, and for any id.
func TestSignIsTheHMAC(t *testing.T) {
	key := []byte("0123456789abcdef0123")
	s, err := NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	want := func(id string) string {
		m := hmac.New(sha256.New, key)
		m.Write([]byte("wr_vid\x00" + id))
		return id + "." + enc.EncodeToString(m.Sum(nil))
	}
	for _, tc := range []struct{ name, id string }{
		{"an id", mustID(t)},
		{"another id", mustID(t)},
		{"empty", ""},
		{"longer than an id", strings.Repeat("x", 100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for range 50 {
						if got := s.Sign(tc.id); got != want(tc.id) {
							t.Errorf("Sign(%q) = %q, want %q", tc.id, got, want(tc.id))
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}
