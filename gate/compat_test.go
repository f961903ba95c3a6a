package gate

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"waitingroom/server/pass"
)

// TestPassesOfServerPass checks that the gate verifies what waitingroom's
// signer (server/pass) signs, against the JWKS it serves, across a key
// rotation. Only this test imports server/pass; the gate does not.
func TestPassesOfServerPass(t *testing.T) {
	old, err := pass.Load("../server/pass/testdata/previous.pem", "")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := pass.Load("../server/pass/testdata/current.pem", "../server/pass/testdata/previous.pem")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/jwks.json" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(keys.JWKS())
	}))
	defer srv.Close()
	g, err := New(Options{RoomURL: srv.URL, Room: "sale", APIKey: "k", Audience: "https://shop.example"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claims := pass.Claims{Room: "sale", Subject: "v", ID: "jti-1", Audience: "https://shop.example", Issuer: srv.URL,
		IssuedAt: now, Expiry: now.Add(5 * time.Minute)}
	cases := []struct {
		name   string
		signer *pass.Keys
		mod    func(*pass.Claims)
		ok     bool
	}{
		{"current key", keys, nil, true},
		{"previous key", old, nil, true},
		{"another room", keys, func(c *pass.Claims) { c.Room = "other" }, false},
		{"another shop", keys, func(c *pass.Claims) { c.Audience = "https://evil.example" }, false},
		{"expired", keys, func(c *pass.Claims) { c.Expiry = now.Add(-time.Minute) }, false},
	}
	for _, c := range cases {
		cl := claims
		if c.mod != nil {
			c.mod(&cl)
		}
		s, err := c.signer.Sign(cl)
		if err != nil {
			t.Fatal(err)
		}
		got, err := g.verify(t.Context(), s)
		if (err == nil) != c.ok {
			t.Errorf("%s: verify = %v, want ok %v", c.name, err, c.ok)
		}
		if err == nil && (got.Room != "sale" || got.ID != "jti-1" || got.Subject != "v") {
			t.Errorf("%s: claims %+v", c.name, got)
		}
	}
}
