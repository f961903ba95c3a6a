package identity

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"waitingroom/server/identity/identitytest"
	"waitingroom/server/visitor"
)

type claims struct {
	jwt.Claims
	Line string `json:"line,omitempty"`
}

// TestVerify: a token is accepted only when the shop's key signed it, for
// this room, within its times (a minute's leeway), naming a buyer; each
// refusal says which.
func TestVerify(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	shop, other := identitytest.NewKey(t, "ec", "k1"), identitytest.NewKey(t, "ec", "k1")
	rsaKey, edKey := identitytest.NewKey(t, "rsa", "r1"), identitytest.NewKey(t, "ed", "")
	keys := Static{shop.Public, rsaKey.Public, edKey.Public}
	ok := func(c *claims) claims {
		base := claims{Claims: jwt.Claims{Subject: "member-42", Audience: jwt.Audience{"drop"}, Expiry: jwt.NewNumericDate(now.Add(time.Hour)),
			IssuedAt: jwt.NewNumericDate(now)}, Line: "presale"}
		if c != nil {
			c.Claims.Subject, c.Claims.Audience = base.Subject, base.Audience
			return *c
		}
		return base
	}
	for _, tc := range []struct {
		name  string
		token string
		want  error
	}{
		{"the shop's EC key", shop.Sign(t, ok(nil)), nil},
		{"the shop's RSA key", rsaKey.Sign(t, ok(nil)), nil},
		{"the shop's Ed25519 key, no kid", edKey.Sign(t, ok(nil)), nil},
		{"another key with the same kid", other.Sign(t, ok(nil)), ErrSignature},
		{"another room", shop.Sign(t, claims{Claims: jwt.Claims{Subject: "m", Audience: jwt.Audience{"other"}, Expiry: jwt.NewNumericDate(now.Add(time.Hour))}}), ErrWrongRoom},
		{"no audience", shop.Sign(t, claims{Claims: jwt.Claims{Subject: "m", Expiry: jwt.NewNumericDate(now.Add(time.Hour))}}), ErrWrongRoom},
		{"expired", shop.Sign(t, claims{Claims: jwt.Claims{Subject: "m", Audience: jwt.Audience{"drop"}, Expiry: jwt.NewNumericDate(now.Add(-2 * time.Minute))}}), ErrExpired},
		{"expired within the leeway", shop.Sign(t, claims{Claims: jwt.Claims{Subject: "m", Audience: jwt.Audience{"drop"}, Expiry: jwt.NewNumericDate(now.Add(-30 * time.Second))}}), nil},
		{"not yet valid", shop.Sign(t, claims{Claims: jwt.Claims{Subject: "m", Audience: jwt.Audience{"drop"}, Expiry: jwt.NewNumericDate(now.Add(time.Hour)), NotBefore: jwt.NewNumericDate(now.Add(5 * time.Minute))}}), ErrNotYetValid},
		{"no expiry", shop.Sign(t, claims{Claims: jwt.Claims{Subject: "m", Audience: jwt.Audience{"drop"}}}), ErrNoExpiry},
		{"no subject", shop.Sign(t, claims{Claims: jwt.Claims{Audience: jwt.Audience{"drop"}, Expiry: jwt.NewNumericDate(now.Add(time.Hour))}}), ErrNoSubject},
		{"a long subject", shop.Sign(t, claims{Claims: jwt.Claims{Subject: strings.Repeat("m", 257), Audience: jwt.Audience{"drop"}, Expiry: jwt.NewNumericDate(now.Add(time.Hour))}}), ErrNoSubject},
		{"a line no room takes", shop.Sign(t, claims{Claims: jwt.Claims{Subject: "m", Audience: jwt.Audience{"drop"}, Expiry: jwt.NewNumericDate(now.Add(time.Hour))}, Line: "pre sale"}), ErrMalformed},
		{"not a token", "hello", ErrMalformed},
		{"unsigned (alg none)", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJtIiwiYXVkIjoiZHJvcCJ9.", ErrMalformed},
		{"too long", strings.Repeat("a", MaxTokenLen+1), ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Verify(ctx, tc.token, "drop", keys, now)
			if !errors.Is(err, tc.want) || (err != nil) != (tc.want != nil) {
				t.Fatalf("Verify: %+v %v, want %v", c, err, tc.want)
			}
			if tc.want != nil && !Refused(err) {
				t.Fatalf("%v is not a refusal", err)
			}
			if err == nil && (c.Subject == "" || c.Expiry.IsZero()) {
				t.Fatalf("claims %+v", c)
			}
		})
	}
	c, _ := Verify(ctx, shop.Sign(t, ok(nil)), "drop", keys, now)
	if c.Subject != "member-42" || c.Line != "presale" || !c.Expiry.Equal(now.Add(time.Hour)) {
		t.Fatalf("claims %+v", c)
	}
	// An HMAC token, even with the right shape, is never accepted.
	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, nil)
	tok, _ := jwt.Signed(hs).Claims(ok(nil)).Serialize()
	if _, err := Verify(ctx, tok, "drop", keys, now); !errors.Is(err, ErrMalformed) {
		t.Fatalf("an HMAC token: %v", err)
	}
}

// TestParseKeys: PEM public keys, a JWK and a JWK set are taken; private
// keys and anything else are refused, saying why.
func TestParseKeys(t *testing.T) {
	ec, ed := identitytest.NewKey(t, "ec", "k1"), identitytest.NewKey(t, "ed", "")
	ecPriv, _ := ec.Private()
	der, _ := x509.MarshalPKIXPublicKey(ec.Public.Key)
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	privDER, _ := x509.MarshalPKCS8PrivateKey(ecPriv)
	pemPriv := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER}))
	jwk, _ := json.Marshal(ec.Public)
	set, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{ec.Public, ed.Public}})
	privJWK, _ := json.Marshal(jose.JSONWebKey{Key: ecPriv, KeyID: "p"})
	for _, tc := range []struct {
		name, text string
		n          int
		err        string
	}{
		{"a PEM public key", pemKey, 1, ""},
		{"two PEM keys", pemKey + "\n" + pemKey, 2, ""},
		{"a JWK", string(jwk), 1, ""},
		{"a JWK set", string(set), 2, ""},
		{"a PEM private key", pemPriv, 0, "public key"},
		{"a private JWK", string(privJWK), 0, "public key"},
		{"an empty set", `{"keys":[]}`, 0, "without keys"},
		{"nothing", "  ", 0, "no key"},
		{"text", "hello", 0, "not a PEM"},
		{"bad JSON", "{", 0, "not JSON"},
		{"too long", strings.Repeat("a", MaxPastedKeys+1), 0, "KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := ParseKeys(tc.text)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseKeys: %v, want an error about %q", err, tc.err)
				}
				return
			}
			if err != nil || len(keys) != tc.n {
				t.Fatalf("ParseKeys: %d keys, %v; want %d", len(keys), err, tc.n)
			}
		})
	}
}

// TestCheckJWKSURL: https, or http to loopback; never a metadata address.
func TestCheckJWKSURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://shop.example/.well-known/jwks.json", true},
		{"http://127.0.0.1:8081/jwks.json", true},
		{"http://localhost/jwks.json", true},
		{"http://shop.example/jwks.json", false},
		{"https://169.254.169.254/latest", false},
		{"https://metadata.google.internal/", false},
		{"ftp://shop.example/jwks.json", false},
		{"/jwks.json", false},
		{"https://user:pass@shop.example/jwks.json", false},
	} {
		if err := CheckJWKSURL(tc.url); (err == nil) != tc.ok {
			t.Errorf("CheckJWKSURL(%q) = %v, want ok %v", tc.url, err, tc.ok)
		}
	}
}

// TestVisitorID: one identity is one visitor in a room, whatever device
// presents it; another room or another buyer is another visitor; the id
// has the shape of a visitor id.
func TestVisitorID(t *testing.T) {
	v, err := NewVisitors([]byte("the deployment's secret 0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	w, _ := NewVisitors([]byte("another deployment's secret 012345"))
	a := v.ID("drop", "member-42")
	for _, tc := range []struct {
		name string
		id   string
		same bool
	}{
		{"the same identity again", v.ID("drop", "member-42"), true},
		{"another buyer", v.ID("drop", "member-43"), false},
		{"another room", v.ID("drop2", "member-42"), false},
		{"room and subject run together", v.ID("dropm", "ember-42"), false},
		{"another deployment", w.ID("drop", "member-42"), false},
	} {
		if (tc.id == a) != tc.same || !visitor.ValidID(tc.id) {
			t.Errorf("%s: %q against %q, want same %v and a valid id", tc.name, tc.id, a, tc.same)
		}
	}
	if _, err := NewVisitors(nil); err == nil {
		t.Fatal("no secret: want an error")
	}
}
