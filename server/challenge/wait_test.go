package challenge

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestWaitFor(t *testing.T) {
	for _, tc := range []struct {
		maxNumber int64
		want      time.Duration
	}{
		{0, MinWait},
		{DefaultPolicy().M0, MinWait}, // 0.125 s on the phone: the floor
		{80_000, MinWait},             // exactly 2 s
		{200_000, 5 * time.Second},
		{1_000_000, 25 * time.Second},
		{DefaultPolicy().Max, 15 * time.Second},
		{1 << 40, MaxWait},
	} {
		if got := WaitFor(tc.maxNumber); got != tc.want {
			t.Errorf("WaitFor(%d) = %v, want %v", tc.maxNumber, got, tc.want)
		}
	}
}

// TestWaitTokens: a wait token is honoured in its room from NotBefore
// until it expires, and refused, for the right reason, otherwise.
func TestWaitTokens(t *testing.T) {
	k, _ := Derive([]byte("secret-a"), "wr:db0")
	other, _ := Derive([]byte("secret-b"), "wr:db0")
	otherNS, _ := Derive([]byte("secret-a"), "shop-b")
	at := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	const net = "2001:db8:1:2::/64"
	w := NewWait("drop", net, at.Add(5*time.Second))
	tok := k.SignWait(w)
	if len(tok) > MaxWaitTokenLen || strings.ContainsAny(tok, "+/=&? ") {
		t.Fatalf("token %q: too long or not URL-safe", tok)
	}
	if w.Expires.Sub(w.NotBefore) != WaitTTL || len(w.Nonce) < 20 || w.ProofID() != "w:"+w.Nonce {
		t.Fatalf("wait %+v", w)
	}
	if again := NewWait("drop", net, at); again.Nonce == w.Nonce {
		t.Fatal("two waits share a nonce")
	}
	flip := []byte(tok)
	flip[len(flip)-3] ^= 1 // one bit of the MAC
	forged := strings.Replace(tok, "."+"drop"+".", ".other.", 1)
	_, mac, _ := cut(tok)
	sooner := w
	sooner.NotBefore = at // due at once, under the first token's MAC
	sooner.Expires = at.Add(WaitTTL)
	for _, tc := range []struct {
		name, token, room, net string
		now                    time.Time
		want                   error
	}{
		{"due", tok, "drop", net, at.Add(5 * time.Second), nil},
		{"just before expiry", tok, "drop", net, w.Expires.Add(-time.Millisecond), nil},
		{"early", tok, "drop", net, at.Add(4 * time.Second), ErrEarly},
		{"expired", tok, "drop", net, w.Expires, ErrExpired},
		{"other room", tok, "other", net, at.Add(5 * time.Second), ErrOtherRoom},
		{"another namespace's, same secret", otherNS.SignWait(w), "drop", net, at.Add(5 * time.Second), ErrInvalid},
		{"another network", tok, "drop", "203.0.113.0/24", at.Add(5 * time.Second), ErrOtherNetwork},
		{"no network", tok, "drop", "", at.Add(5 * time.Second), ErrOtherNetwork},
		{"another deployment's", other.SignWait(w), "drop", net, at.Add(5 * time.Second), ErrInvalid},
		{"a bit flipped", string(flip), "drop", net, at.Add(5 * time.Second), ErrInvalid},
		{"room rewritten", forged, "other", net, at.Add(5 * time.Second), ErrInvalid},
		{"sooner notBefore", sooner.body() + "." + mac, "drop", net, at.Add(time.Second), ErrInvalid},
		{"no MAC", w.body(), "drop", net, at.Add(5 * time.Second), ErrInvalid},
		{"empty", "", "drop", net, at, ErrInvalid},
		{"too long", tok + strings.Repeat("a", MaxWaitTokenLen), "drop", net, at.Add(5 * time.Second), ErrInvalid},
		{"a challenge payload", "eyJhbGdvcml0aG0iOiJTSEEtMjU2In0=", "drop", net, at, ErrInvalid},
	} {
		got, err := k.VerifyWait(tc.token, tc.room, tc.net, tc.now)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
			continue
		}
		if tc.want == nil || tc.want == ErrEarly {
			if got != w {
				t.Errorf("%s: read %+v, want %+v", tc.name, got, w)
			}
		}
		if tc.want == ErrEarly && got.Left(tc.now) != time.Second {
			t.Errorf("%s: %v left, want 1s", tc.name, got.Left(tc.now))
		}
	}
}
