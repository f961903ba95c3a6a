// Package token mints and checks single-use entry tokens.
//
// A token is 32 bytes from crypto/rand, encoded as unpadded URL-safe base64
// (43 characters). Its state lives in Redis (see package queue); this package
// only knows its shape, so that forged or malformed tokens can be rejected
// before any network round trip.
package token

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
)

// Size is the number of random bytes in a token.
const Size = 32

// Len is the length of an encoded token.
const Len = 43

var enc = base64.RawURLEncoding.Strict()

// New returns a fresh token. It returns an error only when the system's
// random source fails.
func New() (string, error) {
	var b [Size]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("token: read random: %w", err)
	}
	return enc.EncodeToString(b[:]), nil
}

// NewBatch returns n fresh tokens. It returns an error only when the
// system's random source fails.
func NewBatch(n int) ([]string, error) {
	if n <= 0 {
		return nil, nil
	}
	raw := make([]byte, n*Size)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("token: read random: %w", err)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = enc.EncodeToString(raw[i*Size : (i+1)*Size])
	}
	return out, nil
}

// Valid reports whether s has the exact shape of a token: 43 characters of
// canonical unpadded URL-safe base64 that decode to 32 bytes. It does no I/O.
func Valid(s string) bool {
	if len(s) != Len {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	var b [Size + 1]byte
	n, err := enc.Decode(b[:], []byte(s))
	return err == nil && n == Size
}
