package draw

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/hkdf"
)

// seedInfo is the HKDF info string of Seeder's seeds; changing it changes
// every seed.
const seedInfo = "waitingroom draw seed v1"

// NonceLen is the length of a draw's nonce in bytes.
const NonceLen = 32

// ErrNoSecret reports that no secret of the Seeder derives a seed whose
// SHA-256 is the draw's commitment: the commitment was made under another
// SECRET_KEY.
var ErrNoSecret = errors.New("draw: no secret derives the committed seed")

// Seeder derives draw seeds from the deployment's secret, so that the seed
// is nowhere a Redis reader can find it before the reveal: Redis keeps a
// random nonce and the commitment, and the seed is
// HKDF-SHA256(secret, salt = nonce, info = "waitingroom draw seed
// v1|<namespace>|<room>"). Every instance that shares the secret derives
// the same seed. Previous secrets (a rotation) still derive the seeds of
// draws committed under them.
type Seeder struct {
	namespace string
	secrets   [][]byte // the current first
}

// NewSeeder returns a Seeder of the deployment namespace that derives new
// seeds from secret and also finds committed seeds under previous.
func NewSeeder(namespace string, secret []byte, previous ...[]byte) (*Seeder, error) {
	if len(secret) == 0 {
		return nil, errors.New("draw: seeder: empty secret")
	}
	s := &Seeder{namespace: namespace, secrets: [][]byte{secret}}
	for _, p := range previous {
		if len(p) > 0 {
			s.secrets = append(s.secrets, p)
		}
	}
	return s, nil
}

// NewNonce returns NonceLen random bytes from crypto/rand.
func NewNonce() ([]byte, error) {
	b := make([]byte, NonceLen)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("draw: new nonce: %w", err)
	}
	return b, nil
}

// Seed returns the seed of room's draw with nonce under the current
// secret.
func (s *Seeder) Seed(room string, nonce []byte) ([]byte, error) {
	return s.derive(s.secrets[0], room, nonce)
}

// Committed returns the seed of room's draw with nonce whose SHA-256 is
// commitHex, under the current secret or a previous one; ErrNoSecret when
// none derives it.
func (s *Seeder) Committed(room string, nonce []byte, commitHex string) ([]byte, error) {
	for _, secret := range s.secrets {
		seed, err := s.derive(secret, room, nonce)
		if err != nil {
			return nil, err
		}
		if subtle.ConstantTimeCompare([]byte(Commitment(seed)), []byte(commitHex)) == 1 {
			return seed, nil
		}
	}
	return nil, ErrNoSecret
}

func (s *Seeder) derive(secret []byte, room string, nonce []byte) ([]byte, error) {
	if len(nonce) != NonceLen {
		return nil, fmt.Errorf("draw: seed: the nonce is %d bytes, want %d", len(nonce), NonceLen)
	}
	seed := make([]byte, SeedLen)
	info := seedInfo + "|" + s.namespace + "|" + room
	if _, err := io.ReadFull(hkdf.New(sha256.New, secret, nonce, []byte(info)), seed); err != nil {
		return nil, fmt.Errorf("draw: seed: %w", err)
	}
	return seed, nil
}
