package web

import (
	"strconv"
	"testing"

	"waitingroom/server/identity/identitytest"
)

// TestPastedKeys: a text parses once and is answered from the cache
// after; a bad text is refused every time and never kept; past
// maxPastedKeys texts the cache starts afresh.
func TestPastedKeys(t *testing.T) {
	pem := identitytest.NewKey(t, "ec", "k1").PEM(t)
	var c pastedKeys
	cases := []struct {
		name, text string
		bad        bool
		kept       int
	}{
		{"a PEM key", pem, false, 1},
		{"the same again", pem, false, 1},
		{"not a key", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----", true, 1},
		{"empty", "", true, 1},
	}
	for _, tc := range cases {
		keys, err := c.parse(tc.text)
		if (err != nil) != tc.bad || !tc.bad && len(keys) != 1 || len(c.byText) != tc.kept {
			t.Fatalf("%s: %d keys, %v; %d kept, want %d (bad %v)", tc.name, len(keys), err, len(c.byText), tc.kept, tc.bad)
		}
	}
	first, _ := c.parse(pem)
	second, _ := c.parse(pem)
	if &first[0] != &second[0] {
		t.Fatal("the same text parsed twice, want the cached keys")
	}
	for i := range maxPastedKeys {
		c.byText[strconv.Itoa(i)] = first
	}
	if _, err := c.parse(pem + "\n"); err != nil || len(c.byText) != 1 {
		t.Fatalf("past the bound: %v, %d kept, want a fresh cache of 1", err, len(c.byText))
	}
}
