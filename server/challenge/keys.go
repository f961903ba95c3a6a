// Package challenge issues and verifies the proof-of-work challenges that a
// join must solve before it creates a new place in a room (the ALTCHA v1
// protocol: find the number n in [0, maxNumber] with SHA-256(salt + n) =
// challenge; the challenge is HMAC-signed), and decides their difficulty
// from the recent join rates.
package challenge

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/hkdf"
)

// The HKDF info strings of Derive; changing one changes that key.
const (
	challengeInfo = "waitingroom challenge v1"
	waitInfo      = "waitingroom wait token v1"
)

// Keys are the HMAC keys derived from the deployment's secret: one signs
// the challenges, one the no-JavaScript wait tokens. Every instance that
// shares the secret derives the same keys.
type Keys struct {
	challenge string // hex, as the ALTCHA library takes it
	wait      []byte
}

// Derive makes Keys from the deployment's secret with HKDF-SHA256 (info
// "waitingroom challenge v1|<namespace>" and "waitingroom wait token
// v1|<namespace>"), namespace being the deployment's Redis namespace: two
// deployments that share a secret (and a Redis) refuse each other's proofs
// and wait tokens, whose replay records are per namespace.
func Derive(secret []byte, namespace string) (*Keys, error) {
	if len(secret) == 0 {
		return nil, errors.New("challenge: derive: empty secret")
	}
	c, err := derive(secret, challengeInfo+"|"+namespace)
	if err != nil {
		return nil, err
	}
	w, err := derive(secret, waitInfo+"|"+namespace)
	if err != nil {
		return nil, err
	}
	return &Keys{challenge: hex.EncodeToString(c), wait: w}, nil
}

func derive(secret []byte, info string) ([]byte, error) {
	k := make([]byte, 32)
	if _, err := io.ReadFull(hkdf.New(sha256.New, secret, nil, []byte(info)), k); err != nil {
		return nil, fmt.Errorf("challenge: derive %q: %w", info, err)
	}
	return k, nil
}

// WaitKey returns the HMAC key of the wait tokens (32 bytes). The caller
// must not modify it.
func (k *Keys) WaitKey() []byte { return k.wait }
