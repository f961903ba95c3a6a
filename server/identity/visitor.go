package identity

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// Visitors derives the visitor id of a verified identity in a room, so
// that every device that presents the same identity is the same visitor:
// the same place in line and the same pass. The id is an HMAC of the
// room and the subject under a key derived from the deployment's secret,
// shaped as visitor.NewID's ids; the subject cannot be read back from it.
type Visitors struct{ key []byte }

// NewVisitors derives the ids' key from secret.
func NewVisitors(secret []byte) (Visitors, error) {
	if len(secret) == 0 {
		return Visitors{}, errors.New("identity: no secret to derive visitor ids from")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, "waitingroom identity visitors", sha256.Size)
	if err != nil {
		return Visitors{}, fmt.Errorf("identity: derive the visitor ids' key: %w", err)
	}
	return Visitors{key: key}, nil
}

// Zero reports the zero Visitors, which has no key.
func (v Visitors) Zero() bool { return v.key == nil }

// ID returns the visitor id of subject in room.
func (v Visitors) ID(room, subject string) string {
	m := hmac.New(sha256.New, v.key)
	m.Write([]byte(room))
	m.Write([]byte{0})
	m.Write([]byte(subject))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}
