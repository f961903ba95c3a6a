package token

import (
	"strings"
	"testing"
)

func TestNewIsValidAndUnique(t *testing.T) {
	seen := map[string]bool{}
	batch, err := NewBatch(200)
	if err != nil {
		t.Fatal(err)
	}
	one, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range append(batch, one) {
		if !Valid(tok) {
			t.Fatalf("fresh token %q is not valid", tok)
		}
		if seen[tok] {
			t.Fatalf("duplicate token %q", tok)
		}
		seen[tok] = true
	}
	if got, _ := NewBatch(0); got != nil {
		t.Fatalf("NewBatch(0) = %v, want nil", got)
	}
}

func TestValid(t *testing.T) {
	good, _ := New()
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"fresh", good, true},
		{"empty", "", false},
		{"short", good[:42], false},
		{"long", good + "A", false},
		{"padding", good[:42] + "=", false},
		{"std alphabet", strings.Repeat("+", 43), false},
		{"space", good[:42] + " ", false},
		{"non canonical tail bits", strings.Repeat("A", 42) + "B", false},
		{"canonical zero", strings.Repeat("A", 43), true},
		{"unicode", good[:41] + "é", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Valid(tt.in); got != tt.want {
				t.Fatalf("Valid(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}
