package k6

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/altcha-org/altcha-lib-go"
)

// Solved is a solved ALTCHA challenge.
type Solved struct {
	// Payload is the base64 JSON payload the X-Altcha header carries.
	Payload string
	Number  int64
	// Hashes is how many SHA-256 sums the search took (Number + 1).
	Hashes int64
}

// solveCheckEvery is how many hashes the solver runs between looks at its
// context.
const solveCheckEvery = 1 << 14

// maxSolveNumber bounds the search of a challenge whose maxNumber is out
// of reason (a client's safety, not a protocol limit).
const maxSolveNumber = 1 << 32

// Solve finds the number n in [0, maxNumber] with SHA-256(salt + n) equal
// to the challenge of an ALTCHA v1 challenge (SHA-256 only), as the
// widget does, but on one reused buffer: the fast solver of the load
// tools. It stops when ctx ends.
func Solve(ctx context.Context, c altcha.Challenge) (Solved, error) {
	if c.Algorithm != string(altcha.SHA256) {
		return Solved{}, fmt.Errorf("solve: algorithm %q, want SHA-256", c.Algorithm)
	}
	if c.MaxNumber < 0 || c.MaxNumber > maxSolveNumber {
		return Solved{}, fmt.Errorf("solve: maxNumber %d out of 0..%d", c.MaxNumber, int64(maxSolveNumber))
	}
	var want [sha256.Size]byte
	if n, err := hex.Decode(want[:], []byte(c.Challenge)); err != nil || n != sha256.Size || len(c.Challenge) != 2*sha256.Size {
		return Solved{}, fmt.Errorf("solve: challenge %q is not a hex SHA-256", c.Challenge)
	}
	buf := make([]byte, 0, len(c.Salt)+20)
	buf = append(buf, c.Salt...)
	for n := int64(0); n <= c.MaxNumber; n++ {
		if n%solveCheckEvery == 0 && ctx.Err() != nil {
			return Solved{Hashes: n}, fmt.Errorf("solve: %w", ctx.Err())
		}
		if sha256.Sum256(strconv.AppendInt(buf, n, 10)) == want {
			payload, err := json.Marshal(altcha.Payload{Algorithm: c.Algorithm, Challenge: c.Challenge,
				Number: n, Salt: c.Salt, Signature: c.Signature})
			if err != nil {
				return Solved{}, fmt.Errorf("solve: %w", err)
			}
			return Solved{Payload: base64.StdEncoding.EncodeToString(payload), Number: n, Hashes: n + 1}, nil
		}
	}
	return Solved{Hashes: c.MaxNumber + 1}, errors.New("solve: no number up to maxNumber matches the challenge")
}
