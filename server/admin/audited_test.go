package admin

import (
	"testing"

	"waitingroom/server/audit"
)

func TestChangeObjects(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cs       []audit.Change
		old, new string
	}{
		{"none", nil, "", ""},
		{"one", []audit.Change{{Field: "rate", Old: "50", New: "80"}}, `{"rate":50}`, `{"rate":80}`},
		{"two", []audit.Change{{Field: "rate", Old: "50", New: "80"}, {Field: "paused", Old: "false", New: "true"}},
			`{"rate":50,"paused":false}`, `{"rate":80,"paused":true}`},
		{"one side lacks", []audit.Change{{Field: "closesAt", New: `"2026-12-01T00:00:00Z"`}},
			`{"closesAt":null}`, `{"closesAt":"2026-12-01T00:00:00Z"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, n := changeObjects(tc.cs)
			if o != tc.old || n != tc.new {
				t.Fatalf("changeObjects %s %s, want %s %s", o, n, tc.old, tc.new)
			}
		})
	}
}

func TestKeyFingerprint(t *testing.T) {
	for _, tc := range []struct{ hash, want string }{
		{"", ""},
		{"abc", ""},
		{"0123456789abcdef", "sha256:01234567"},
	} {
		if got := keyFingerprint(tc.hash); got != tc.want {
			t.Errorf("keyFingerprint(%q) %q, want %q", tc.hash, got, tc.want)
		}
	}
}
