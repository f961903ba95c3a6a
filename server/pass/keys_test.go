package pass

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"
)

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
