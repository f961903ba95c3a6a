// Package access is who may join a room's line: the access codes an
// operator generates or uploads, kept hashed in the order database and
// redeemed atomically, one place a use.
package access

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"waitingroom/server/line"
)

// Alphabet is the symbols of a generated code: Crockford's base 32, with
// no I, L, O or U to misread. A generated code is 12 of them (60 bits),
// shown in groups of four: 7KQ2-M9XD-4HTR.
const Alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

const (
	genLen = 12
	// MinLen and MaxLen bound a code as it is compared (Normalize).
	MinLen, MaxLen = 4, 64
	// MaxUses is the most uses one code may carry.
	MaxUses = 1_000_000
)

// The refusals of a code, each a reason the buyer is told.
var (
	ErrUnknown   = errors.New("access: no such code")
	ErrWrongRoom = errors.New("access: the code is for another room")
	ErrUsedUp    = errors.New("access: the code is used up")
	ErrExpired   = errors.New("access: the code has expired")
)

// InvalidError is a request for codes that cannot be met as asked: a
// count, a spec or an uploaded code out of bounds. Field names what to
// change ("count", "uses", "line", "expiresAt" or "code", then Index is
// the code's place in the upload, from 1); Msg says how, in English.
type InvalidError struct {
	Field string
	Index int
	Msg   string
}

func (e *InvalidError) Error() string { return e.Msg }

func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Spec is what a batch of codes grants: a place in line (the room's only
// line when empty), uses times per code, until ExpiresAt when set.
type Spec struct {
	Line      string     `json:"line"`
	Uses      int        `json:"uses"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// Validate checks s at now: uses from 1 to MaxUses, a line name of
// letters, digits, '-' and '_', and an expiry in the future.
func (s Spec) Validate(now time.Time) error {
	if s.Uses < 1 || s.Uses > MaxUses {
		return invalid("uses", "uses must be from 1 to %d, not %d", MaxUses, s.Uses)
	}
	if !line.ValidName(s.Line) {
		return invalid("line", "line must be up to %d letters, digits, '-' or '_', not %q", line.MaxNameLen, s.Line)
	}
	if s.ExpiresAt != nil && !s.ExpiresAt.After(now) {
		return invalid("expiresAt", "expiresAt %s is not in the future", s.ExpiresAt.Format(time.RFC3339))
	}
	return nil
}

// Normalize returns code as it is compared: upper case, without spaces
// and dashes, which buyers type or leave out at will. It reports false
// for a code that is then not MinLen to MaxLen letters, digits or '_'.
func Normalize(code string) (string, bool) {
	var b strings.Builder
	for _, r := range code {
		switch {
		case r == '-' || r == ' ' || r == '\t':
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		case r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_':
			b.WriteRune(r)
		default:
			return "", false
		}
		if b.Len() > MaxLen {
			return "", false
		}
	}
	return b.String(), b.Len() >= MinLen
}

// Generate returns a new random code, in groups of four.
func Generate() string {
	var sym [genLen]byte
	rand.Read(sym[:]) // never fails (crypto/rand)
	var b strings.Builder
	for i, v := range sym {
		if i > 0 && i%4 == 0 {
			b.WriteByte('-')
		}
		b.WriteByte(Alphabet[v%32])
	}
	return b.String()
}

// Hasher hashes normalized codes with a key derived from the deployment's
// secret: HMAC-SHA256, the same for every room, so that a code of another
// room is told apart from one that does not exist.
type Hasher struct{ key []byte }

// NewHasher derives the codes' key from secret.
func NewHasher(secret []byte) (Hasher, error) {
	if len(secret) == 0 {
		return Hasher{}, errors.New("access: no secret to derive the codes' key from")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, "waitingroom access codes", sha256.Size)
	if err != nil {
		return Hasher{}, fmt.Errorf("access: derive the codes' key: %w", err)
	}
	return Hasher{key: key}, nil
}

// Sum returns the hash of the normalized code.
func (h Hasher) Sum(normalized string) []byte {
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte(normalized))
	return m.Sum(nil)
}

// hintFrom is the shortest code that keeps a hint: a shorter one would
// give away too much of itself.
const hintFrom = 10

// hint is the last three characters of a normalized code of hintFrom
// characters or more, else "".
func hint(normalized string) string {
	if len(normalized) < hintFrom {
		return ""
	}
	return normalized[len(normalized)-3:]
}
