package room

import (
	"unicode/utf8"

	"waitingroom/server/identity"
)

// Access is who may take a new place in a room: anyone, or a buyer with
// an access code; and whether the shop's signed identity of its buyer is
// taken, so that one buyer holds one place on any number of devices.
type Access struct {
	// Access is AccessOpen ("" means it) or AccessCode: a new place takes
	// an access code of the room's (package access).
	Access string `json:"access"`
	// Identity is IdentityOff ("" means it), IdentityOptional (a verified
	// identity is taken, and dedupes) or IdentityRequired (a new place
	// takes one).
	Identity string `json:"identity"`
	// IdentityJWKSURL is where the shop publishes the public keys its
	// identities are signed with; IdentityKeys are such keys pasted (a
	// JWKS, or PEM public keys). A room that takes identities has one of
	// the two.
	IdentityJWKSURL string `json:"identityJWKSURL"`
	IdentityKeys    string `json:"identityKeys"`
	// SignInURL is the shop's page where a buyer signs in and is sent
	// back with an identity: buyers refused for having none are linked
	// there.
	SignInURL string `json:"signInURL"`
}

// The values of Access.Access and Access.Identity.
const (
	AccessOpen       = "open"
	AccessCode       = "code"
	IdentityOff      = "off"
	IdentityOptional = "optional"
	IdentityRequired = "required"
)

// MaxIdentityKeysLen bounds the pasted keys, in bytes.
const MaxIdentityKeysLen = 64 << 10

// NeedsCode reports whether a new place in the room takes an access code.
func (a Access) NeedsCode() bool { return a.Access == AccessCode }

// TakesIdentity reports whether the room takes the shop's identities.
func (a Access) TakesIdentity() bool {
	return a.Identity == IdentityOptional || a.Identity == IdentityRequired
}

// NeedsIdentity reports whether a new place in the room takes a verified
// identity.
func (a Access) NeedsIdentity() bool { return a.Identity == IdentityRequired }

// Validate returns an error that names the first invalid field.
func (a Access) Validate() error {
	switch a.Access {
	case "", AccessOpen, AccessCode:
	default:
		return fieldError("access", "access must be %q or %q", AccessOpen, AccessCode)
	}
	switch a.Identity {
	case "", IdentityOff, IdentityOptional, IdentityRequired:
	default:
		return fieldError("identity", "identity must be %q, %q or %q", IdentityOff, IdentityOptional, IdentityRequired)
	}
	if a.IdentityJWKSURL != "" {
		if len(a.IdentityJWKSURL) > MaxShopURLLen || !utf8.ValidString(a.IdentityJWKSURL) {
			return fieldError("identityJWKSURL", "identityJWKSURL must be a URL of at most %d bytes", MaxShopURLLen)
		}
		if err := identity.CheckJWKSURL(a.IdentityJWKSURL); err != nil {
			return fieldError("identityJWKSURL", "identityJWKSURL is refused: %v", err)
		}
	}
	if a.IdentityKeys != "" {
		if len(a.IdentityKeys) > MaxIdentityKeysLen {
			return fieldError("identityKeys", "identityKeys must be at most %d bytes", MaxIdentityKeysLen)
		}
		if _, err := identity.ParseKeys(a.IdentityKeys); err != nil {
			return fieldError("identityKeys", "identityKeys must be the shop's public keys, as a JWKS or PEM: %v", err)
		}
	}
	if a.IdentityJWKSURL != "" && a.IdentityKeys != "" {
		return fieldError("identityKeys", "give the shop's keys once: identityJWKSURL or identityKeys, not both")
	}
	if a.TakesIdentity() && a.IdentityJWKSURL == "" && a.IdentityKeys == "" {
		return fieldError("identityJWKSURL", "a room that takes identities needs the shop's public keys: identityJWKSURL or identityKeys")
	}
	if !validShopURL(a.SignInURL) {
		return fieldError("signInURL", "signInURL must be empty or an absolute http(s) URL of at most %d bytes", MaxShopURLLen)
	}
	if a.NeedsIdentity() && a.SignInURL == "" {
		return fieldError("signInURL", "a room that requires an identity needs signInURL, the shop's page where buyers sign in")
	}
	return nil
}

// AccessPatch is a partial update of Access: nil fields keep their value.
type AccessPatch struct {
	Access          *string `json:"access"`
	Identity        *string `json:"identity"`
	IdentityJWKSURL *string `json:"identityJWKSURL"`
	IdentityKeys    *string `json:"identityKeys"`
	SignInURL       *string `json:"signInURL"`
}

func (p AccessPatch) apply(a Access) Access {
	set(&a.Access, p.Access)
	set(&a.Identity, p.Identity)
	set(&a.IdentityJWKSURL, p.IdentityJWKSURL)
	set(&a.IdentityKeys, p.IdentityKeys)
	set(&a.SignInURL, p.SignInURL)
	return a
}
