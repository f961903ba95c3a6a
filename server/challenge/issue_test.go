package challenge

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	altcha "github.com/altcha-org/altcha-lib-go"
)

// solve finds c's number and returns the payload a client sends.
func solve(t *testing.T, c Challenge) (altcha.Payload, string) {
	t.Helper()
	s, err := altcha.SolveChallenge(c.Challenge, c.Salt, altcha.Algorithm(c.Algorithm), int(c.MaxNumber), 0, nil)
	if err != nil || s == nil {
		t.Fatalf("solve: %v %v", s, err)
	}
	p := altcha.Payload{Algorithm: c.Algorithm, Challenge: c.Challenge, Number: int64(s.Number), Salt: c.Salt, Signature: c.Signature}
	return p, encode(t, p)
}

func encode(t *testing.T, p altcha.Payload) string {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func TestDeriveDiffers(t *testing.T) {
	a, err := Derive([]byte("secret-a"), "wr:db0")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Derive([]byte("secret-a"), "wr:db0")
	c, _ := Derive([]byte("secret-b"), "wr:db0")
	d, _ := Derive([]byte("secret-a"), "shop-b")
	if a.challenge != b.challenge || string(a.wait) != string(b.wait) {
		t.Error("one secret derived two key sets")
	}
	if a.challenge == c.challenge || a.challenge == string(a.wait) {
		t.Error("keys of different secrets or uses are equal")
	}
	if a.challenge == d.challenge || string(a.wait) == string(d.wait) {
		t.Error("two namespaces that share a secret derived the same keys")
	}
	if _, err := Derive(nil, "wr:db0"); err == nil {
		t.Error("an empty secret derived keys")
	}
}

func TestIssueVerify(t *testing.T) {
	k, _ := Derive([]byte("secret"), "wr:db0")
	other, _ := Derive([]byte("another deployment"), "wr:db0")
	otherNS, _ := Derive([]byte("secret"), "shop-b")
	now := time.Unix(1_800_000_000, 0)
	c, err := k.Issue("sale", "visitor-1", 1000, now)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxNumber != 1000 || c.Algorithm != "SHA-256" || !strings.Contains(c.Salt, "room=sale") || !strings.Contains(c.Salt, "expires=1800000120") ||
		!strings.Contains(c.Salt, "iat=1800000000000") || !strings.Contains(c.Salt, "v=visitor-1") {
		t.Fatalf("challenge %+v: want maxNumber 1000, SHA-256, room, expiry, issue time and visitor in the salt", c)
	}
	p, good := solve(t, c)
	wrongNumber := p
	wrongNumber.Number++
	sha1 := p
	sha1.Algorithm = "SHA-1"
	tests := []struct {
		name    string
		keys    *Keys
		payload string
		room    string
		at      time.Time
		want    error
	}{
		{"a solution", k, good, "sale", now.Add(time.Minute), nil},
		{"another room's", k, good, "other", now, ErrOtherRoom},
		{"at its expiry", k, good, "sale", now.Add(TTL), ErrExpired},
		{"another deployment's", other, good, "sale", now, ErrInvalid},
		{"another namespace's, same secret", otherNS, good, "sale", now, ErrInvalid},
		{"a wrong number", k, encode(t, wrongNumber), "sale", now, ErrInvalid},
		{"another algorithm", k, encode(t, sha1), "sale", now, ErrInvalid},
		{"empty", k, "", "sale", now, ErrInvalid},
		{"not base64", k, "%%%", "sale", now, ErrInvalid},
		{"not JSON", k, base64.StdEncoding.EncodeToString([]byte("nope")), "sale", now, ErrInvalid},
		{"too long", k, strings.Repeat("A", MaxPayloadLen+4), "sale", now, ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pr, err := tc.keys.Verify(tc.payload, tc.room, tc.at)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Verify: %v, want %v", err, tc.want)
			}
			if err == nil && (pr.ID != c.Challenge || !pr.Expires.Equal(now.Add(TTL)) || !pr.IssuedAt.Equal(now) || pr.Visitor != "visitor-1") {
				t.Errorf("proof %+v: want id %s issued %v for visitor-1, expiring %v", pr, c.Challenge, now, now.Add(TTL))
			}
		})
	}
}

func TestIssueRefusesNoWork(t *testing.T) {
	k, _ := Derive([]byte("secret"), "wr:db0")
	if _, err := k.Issue("sale", "visitor-1", 0, time.Now()); err == nil {
		t.Error("a challenge of maxNumber 0 was issued")
	}
}
