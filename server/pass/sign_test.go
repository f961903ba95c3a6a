package pass

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

func validClaims(now time.Time) Claims {
	return Claims{Room: "sale", Subject: "abc", ID: "jti-1", Audience: "https://shop.example", Issuer: "https://queue.example",
		IssuedAt: now, Expiry: now.Add(5 * time.Minute)}
}

// rawSign signs arbitrary claims with any go-jose key and alg, for forgeries.
func rawSign(t *testing.T, alg jose.SignatureAlgorithm, key any, kid string, claims any) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSignVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	k := mustLoad(t, "current.pem", "previous.pem")
	old := mustLoad(t, "previous.pem", "")
	_, foreign, _ := ed25519.GenerateKey(nil)
	pub := k.set.Keys[0].Key.(ed25519.PublicKey)
	sign := func(c Claims) string {
		s, err := k.Sign(c)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	b64 := base64.RawURLEncoding.EncodeToString
	payload, _ := json.Marshal(map[string]any{"room": "sale", "jti": "x", "aud": "https://shop.example", "exp": now.Add(time.Minute).Unix()})
	noneTok := b64([]byte(`{"alg":"none","kid":"`+k.KeyID()+`"}`)) + "." + b64(payload) + "."
	claimsMap := func(drop string) map[string]any {
		m := map[string]any{"room": "sale", "jti": "x", "aud": "https://shop.example", "exp": now.Add(time.Minute).Unix(), "iat": now.Unix()}
		delete(m, drop)
		return m
	}
	privCur := mustPriv(t, "testdata/current.pem")
	cases := []struct {
		name string
		tok  string
		ok   bool
	}{
		{"valid", sign(validClaims(now)), true},
		{"signed by the previous key while listed", mustSign(t, old, validClaims(now)), true},
		{"expired", sign(func() Claims { c := validClaims(now); c.Expiry = now.Add(-6 * time.Second); return c }()), false},
		{"expired within leeway", sign(func() Claims { c := validClaims(now); c.Expiry = now.Add(-3 * time.Second); return c }()), true},
		{"iat in the future", sign(func() Claims { c := validClaims(now); c.IssuedAt = now.Add(10 * time.Second); return c }()), false},
		{"iat within leeway", sign(func() Claims { c := validClaims(now); c.IssuedAt = now.Add(3 * time.Second); return c }()), true},
		{"forged with another key, our kid", rawSign(t, jose.EdDSA, foreign, k.KeyID(), claimsMap("")), false},
		{"unknown kid", rawSign(t, jose.EdDSA, foreign, "someone-else", claimsMap("")), false},
		{"no kid", rawSign(t, jose.EdDSA, privCur, "", claimsMap("")), false},
		{"our key, no jti", rawSign(t, jose.EdDSA, privCur, k.KeyID(), claimsMap("jti")), false},
		{"our key, no room", rawSign(t, jose.EdDSA, privCur, k.KeyID(), claimsMap("room")), false},
		{"our key, no aud", rawSign(t, jose.EdDSA, privCur, k.KeyID(), claimsMap("aud")), false},
		{"our key, no exp", rawSign(t, jose.EdDSA, privCur, k.KeyID(), claimsMap("exp")), false},
		{"our key, two auds", rawSign(t, jose.EdDSA, privCur, k.KeyID(), func() map[string]any {
			m := claimsMap("")
			m["aud"] = []string{"https://shop.example", "https://evil.example"}
			return m
		}()), false},
		{"our key, all claims", rawSign(t, jose.EdDSA, privCur, k.KeyID(), claimsMap("")), true},
		{"alg none", noneTok, false},
		{"HS256 keyed with the public key", rawSign(t, jose.HS256, []byte(pub), k.KeyID(), claimsMap("")), false},
		{"garbage", "not.a.jws", false},
		{"empty", "", false},
		{"too long", sign(validClaims(now)) + strings.Repeat("A", MaxLen), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := k.Verify(c.tok, now)
			if c.ok {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if got.Room != "sale" || got.Audience != "https://shop.example" || got.ID == "" {
					t.Errorf("claims %+v", got)
				}
				return
			}
			if err == nil {
				t.Fatalf("Verify accepted it: %+v", got)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			if unknown := c.name == "unknown kid"; errors.Is(err, ErrUnknownKey) != unknown {
				t.Errorf("error %v: ErrUnknownKey %v, want %v", err, !unknown, unknown)
			}
			if c.name == "unknown kid" && UnverifiedRoom(c.tok) != "sale" {
				t.Errorf("UnverifiedRoom = %q, want sale", UnverifiedRoom(c.tok))
			}
		})
	}
}

func TestVerifyRoundTrip(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	k := mustLoad(t, "current.pem", "")
	in := validClaims(now)
	s, err := k.Sign(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := k.Verify(s, now)
	if err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Errorf("round trip: %+v, want %+v", out, in)
	}
	parts := strings.Split(s, ".")
	hdr, _ := base64.RawURLEncoding.DecodeString(parts[0])
	var h map[string]string
	_ = json.Unmarshal(hdr, &h)
	if h["alg"] != "EdDSA" || h["kid"] != k.KeyID() {
		t.Errorf("header %s", hdr)
	}
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	for _, name := range []string{`"room":"sale"`, `"sub":"abc"`, `"jti":"jti-1"`, `"aud":"https://shop.example"`, `"iss":`, `"iat":`, `"exp":`} {
		if !strings.Contains(string(body), name) {
			t.Errorf("payload %s lacks %s", body, name)
		}
	}
}

func TestSignRequires(t *testing.T) {
	k := mustLoad(t, "current.pem", "")
	now := time.Now()
	for name, mod := range map[string]func(*Claims){
		"room":   func(c *Claims) { c.Room = "" },
		"jti":    func(c *Claims) { c.ID = "" },
		"aud":    func(c *Claims) { c.Audience = "" },
		"expiry": func(c *Claims) { c.Expiry = time.Time{} },
	} {
		c := validClaims(now)
		mod(&c)
		if _, err := k.Sign(c); err == nil {
			t.Errorf("Sign without %s succeeded", name)
		}
	}
}

func mustSign(t *testing.T, k *Keys, c Claims) string {
	t.Helper()
	s, err := k.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
