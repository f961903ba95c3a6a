package pass

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

func mustLoad(t *testing.T, cur, prev string) *Keys {
	t.Helper()
	if prev != "" {
		prev = filepath.Join("testdata", prev)
	}
	k, err := Load(filepath.Join("testdata", cur), prev)
	if err != nil {
		t.Fatalf("Load(%s, %s): %v", cur, prev, err)
	}
	return k
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	pkcs1 := filepath.Join(dir, "pkcs1.pem")
	if err := os.WriteFile(pkcs1, []byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, cur, prev string
		want            []string // substrings of the error
	}{
		{"missing file", "testdata/nope.pem", "", []string{"testdata/nope.pem", "no such file"}},
		{"not PEM", "testdata/garbage.txt", "", []string{"testdata/garbage.txt", "not a PEM file"}},
		{"RSA PKCS#8", "testdata/rsa.pem", "", []string{"testdata/rsa.pem", "RSA key, want Ed25519"}},
		{"EC PKCS#8", "testdata/ec.pem", "", []string{"testdata/ec.pem", "EC key, want Ed25519"}},
		{"RSA PKCS#1", pkcs1, "", []string{pkcs1, "RSA PRIVATE KEY is not an Ed25519 key"}},
		{"encrypted", "testdata/encrypted.pem", "", []string{"testdata/encrypted.pem", "encrypted"}},
		{"public key as current", "testdata/previous.pub.pem", "", []string{"previous.pub.pem", `"PUBLIC KEY"`}},
		{"bad previous", "testdata/current.pem", "testdata/rsa.pem", []string{"testdata/rsa.pem", "RSA key"}},
		{"missing previous", "testdata/current.pem", "testdata/gone.pem", []string{"testdata/gone.pem"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, err := Load(c.cur, c.prev)
			if err == nil {
				t.Fatalf("Load = %v, want an error", k)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// rfc7638 computes an OKP key's thumbprint by hand, independently of go-jose.
func rfc7638(pub ed25519.PublicKey) string {
	in := `{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`
	sum := sha256.Sum256([]byte(in))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func TestJWKS(t *testing.T) {
	cases := []struct {
		name, cur, prev string
		n               int
	}{
		{"current only", "current.pem", "", 1},
		{"with previous private", "current.pem", "previous.pem", 2},
		{"with previous public", "current.pem", "previous.pub.pem", 2},
		{"previous equal to current", "current.pem", "current.pem", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := mustLoad(t, c.cur, c.prev)
			var set struct {
				Keys []map[string]string `json:"keys"`
			}
			if err := json.Unmarshal(k.JWKS(), &set); err != nil {
				t.Fatal(err)
			}
			if len(set.Keys) != c.n {
				t.Fatalf("%d keys, want %d: %s", len(set.Keys), c.n, k.JWKS())
			}
			for i, key := range set.Keys {
				if key["kty"] != "OKP" || key["crv"] != "Ed25519" || key["alg"] != "EdDSA" || key["use"] != "sig" {
					t.Errorf("key %d = %v", i, key)
				}
				if _, ok := key["d"]; ok {
					t.Errorf("key %d leaks the private part", i)
				}
				x, _ := base64.RawURLEncoding.DecodeString(key["x"])
				if want := rfc7638(x); key["kid"] != want {
					t.Errorf("key %d kid %s, want thumbprint %s", i, key["kid"], want)
				}
			}
			if set.Keys[0]["kid"] != k.KeyID() {
				t.Errorf("first key %s is not the current %s", set.Keys[0]["kid"], k.KeyID())
			}
		})
	}
}

func TestDerive(t *testing.T) {
	a, err := Derive([]byte("secret one"))
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := Derive([]byte("secret one"))
	b, _ := Derive([]byte("secret two"))
	if a.KeyID() != a2.KeyID() {
		t.Error("the same secret derived two keys")
	}
	if a.KeyID() == b.KeyID() {
		t.Error("two secrets derived one key")
	}
	if _, err := Derive(nil); err == nil {
		t.Error("Derive(nil) succeeded")
	}
	s, err := a.Sign(validClaims(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a2.Verify(s, time.Now()); err != nil {
		t.Errorf("a pass of one instance fails on another with the same secret: %v", err)
	}
}

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

func TestRotation(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	old := mustLoad(t, "previous.pem", "")
	oldPass := mustSign(t, old, validClaims(now))
	cases := []struct {
		name, cur, prev string
		ok              bool
	}{
		{"before the rotation", "previous.pem", "", true},
		{"previous listed (private PEM)", "current.pem", "previous.pem", true},
		{"previous listed (public PEM)", "current.pem", "previous.pub.pem", true},
		{"previous dropped", "current.pem", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := mustLoad(t, c.cur, c.prev).Verify(oldPass, now)
			if (err == nil) != c.ok {
				t.Errorf("Verify = %v, want ok %v", err, c.ok)
			}
		})
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

func mustPriv(t *testing.T, path string) ed25519.PrivateKey {
	t.Helper()
	p, err := loadPrivate(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
