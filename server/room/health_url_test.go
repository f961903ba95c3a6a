package room

import (
	"strings"
	"testing"
)

// TestHealthURL: a room's healthURL is empty or an absolute http(s) URL of
// at most 2048 bytes without user:password; Validate names it otherwise.
func TestHealthURL(t *testing.T) {
	for _, tt := range []struct {
		url string
		ok  bool
	}{
		{"", true},
		{"https://shop.example/health", true},
		{"http://10.0.0.5:9100/metrics?token=abc", true},
		{"https://shop.example/" + strings.Repeat("a", MaxHealthURLLen-len("https://shop.example/")), true},
		{"https://shop.example/" + strings.Repeat("a", MaxHealthURLLen), false},
		{"ftp://shop.example/health", false},
		{"/health", false},
		{"shop.example/health", false},
		{"https://", false},
		{"https://user:pw@shop.example/health", false},
		{"https://user@shop.example/health", false},
		{"https://shop.example/health#x", false},
		{"https://shop.example/he alth", false},
		{"https://shop.example/\x7fhealth", false},
		{"javascript:alert(1)", false},
	} {
		a := DefaultAdapt()
		a.HealthURL = tt.url
		err := a.Validate()
		if (err == nil) != tt.ok || ValidHealthURL(tt.url) != tt.ok {
			t.Errorf("%.60q: %v, want ok %v", tt.url, err, tt.ok)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "healthURL ") {
			t.Errorf("%.60q: error %q does not name healthURL first", tt.url, err)
		}
	}
}
