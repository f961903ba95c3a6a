package room

import (
	"errors"
	"strings"
	"testing"

	"waitingroom/server/identity/identitytest"
)

// TestAccessValidate: each invalid access setting is refused naming its
// field; a room that takes identities has the shop's keys once, and one
// that requires them a sign-in page.
func TestAccessValidate(t *testing.T) {
	pem := identitytest.NewKey(t, "ec", "").PEM(t)
	const signIn = "https://shop.example/signin"
	cases := []struct {
		name  string
		a     Access
		field string // "" valid
	}{
		{"the zero value: open", Access{}, ""},
		{"open, off", Access{Access: AccessOpen, Identity: IdentityOff}, ""},
		{"code", Access{Access: AccessCode}, ""},
		{"an unknown access", Access{Access: "members"}, "access"},
		{"an unknown identity", Access{Identity: "always"}, "identity"},
		{"optional with pasted keys", Access{Identity: IdentityOptional, IdentityKeys: pem}, ""},
		{"optional with a JWKS URL", Access{Identity: IdentityOptional, IdentityJWKSURL: "https://shop.example/jwks.json"}, ""},
		{"optional without keys", Access{Identity: IdentityOptional}, "identityJWKSURL"},
		{"keys twice", Access{Identity: IdentityOptional, IdentityKeys: pem, IdentityJWKSURL: "https://shop.example/jwks.json"}, "identityKeys"},
		{"keys that do not read", Access{Identity: IdentityOptional, IdentityKeys: "hello"}, "identityKeys"},
		{"a private key", Access{Identity: IdentityOptional, IdentityKeys: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}, "identityKeys"},
		{"a metadata JWKS URL", Access{Identity: IdentityOptional, IdentityJWKSURL: "http://169.254.169.254/jwks"}, "identityJWKSURL"},
		{"a plain-http JWKS URL", Access{Identity: IdentityOptional, IdentityJWKSURL: "http://shop.example/jwks"}, "identityJWKSURL"},
		{"required without a sign-in page", Access{Identity: IdentityRequired, IdentityKeys: pem}, "signInURL"},
		{"required", Access{Identity: IdentityRequired, IdentityKeys: pem, SignInURL: signIn}, ""},
		{"a sign-in page that is no URL", Access{SignInURL: "javascript:alert(1)"}, "signInURL"},
		{"keys over the bound", Access{Identity: IdentityOptional, IdentityKeys: strings.Repeat("k", MaxIdentityKeysLen+1)}, "identityKeys"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.a.Validate()
			var fe *FieldError
			switch {
			case c.field == "" && err != nil:
				t.Fatalf("Validate: %v, want valid", err)
			case c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field):
				t.Fatalf("Validate: %v, want an error of field %s", err, c.field)
			}
		})
	}
}
