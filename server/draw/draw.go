// Package draw is the pre-queue's fair and verifiable draw: a commitment
// to a secret seed is published before the pre-queue opens, and at opening
// the seed is revealed and orders the pre-queue tickets, so that anyone can
// recompute the order and check that the seed was fixed in advance.
package draw

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
)

// SeedLen is the length of a seed in bytes.
const SeedLen = 32

// NewSeed returns SeedLen random bytes from crypto/rand.
func NewSeed() ([]byte, error) {
	b := make([]byte, SeedLen)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("draw: new seed: %w", err)
	}
	return b, nil
}

// Commitment returns SHA-256(seed) in lowercase hex.
func Commitment(seed []byte) string {
	h := sha256.Sum256(seed)
	return hex.EncodeToString(h[:])
}

// Key returns HMAC-SHA256(key = seed, message = ticket in decimal): the
// ticket's sort key in the draw.
func Key(seed []byte, ticket int64) [sha256.Size]byte {
	m := hmac.New(sha256.New, seed)
	m.Write(strconv.AppendInt(nil, ticket, 10))
	var k [sha256.Size]byte
	m.Sum(k[:0])
	return k
}

// Order returns the indexes of tickets in drawn order: ascending by Key.
// The work is spread over the machine's cores.
func Order(seed []byte, tickets []int64) []int {
	keys := make([][sha256.Size]byte, len(tickets))
	Keys(seed, tickets, keys)
	return Sorted(keys)
}

// Keys sets keys[i] to Key(seed, tickets[i]) for every ticket, spreading
// the work over the machine's cores. keys must be as long as tickets.
func Keys(seed []byte, tickets []int64, keys [][sha256.Size]byte) {
	if len(keys) != len(tickets) {
		panic("draw: Keys needs one key for each ticket")
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), len(tickets)/4096))
	per := (len(tickets) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := min(w*per, len(tickets)), min((w+1)*per, len(tickets))
		wg.Go(func() {
			m := hmac.New(sha256.New, seed)
			var buf [20]byte
			for i := lo; i < hi; i++ {
				m.Reset()
				m.Write(strconv.AppendInt(buf[:0], tickets[i], 10))
				m.Sum(keys[i][:0])
			}
		})
	}
	wg.Wait()
}

// Sorted returns the indexes of keys in ascending byte order: with the
// keys of Keys, the drawn order of their tickets. It sorts the keys' first
// eight bytes, as numbers, beside the indexes, and compares the rest of
// two keys only where those are equal. Many keys are first placed in
// buckets by their first two bytes (a counting sort), then each bucket is
// sorted: HMAC keys spread evenly, so a bucket holds a handful of keys, and
// any spread still sorts in O(n log n).
func Sorted(keys [][sha256.Size]byte) []int {
	type entry struct {
		head uint64
		i    int
	}
	byKey := func(a, b entry) int {
		if a.head != b.head {
			return cmp.Compare(a.head, b.head)
		}
		return bytes.Compare(keys[a.i][8:], keys[b.i][8:])
	}
	const buckets = 1 << 16
	es := make([]entry, len(keys))
	if len(keys) < 4*buckets {
		for i := range keys {
			es[i] = entry{binary.BigEndian.Uint64(keys[i][:8]), i}
		}
		slices.SortFunc(es, byKey)
	} else {
		at := make([]int, buckets+1)
		for i := range keys {
			at[int(keys[i][0])<<8|int(keys[i][1])+1]++
		}
		for b := 1; b <= buckets; b++ {
			at[b] += at[b-1]
		}
		next := slices.Clone(at[:buckets])
		for i := range keys {
			b := int(keys[i][0])<<8 | int(keys[i][1])
			es[next[b]] = entry{binary.BigEndian.Uint64(keys[i][:8]), i}
			next[b]++
		}
		for b := range buckets {
			slices.SortFunc(es[at[b]:at[b+1]], byKey)
		}
	}
	idx := make([]int, len(keys))
	for k, e := range es {
		idx[k] = e.i
	}
	return idx
}

// Tickets returns tickets in drawn order.
func Tickets(seed []byte, tickets []int64) []int64 {
	out := make([]int64, len(tickets))
	for i, j := range Order(seed, tickets) {
		out[i] = tickets[j]
	}
	return out
}

// Verify checks a published draw: that seedHex is SeedLen bytes whose
// SHA-256 is commitHex, and that drawn is its tickets in the order the seed
// gives. It returns an error naming the first mismatch.
func Verify(commitHex, seedHex string, drawn []int64) error {
	seed, err := hex.DecodeString(seedHex)
	if err != nil || len(seed) != SeedLen {
		return fmt.Errorf("draw: the seed is not %d bytes of hex", SeedLen)
	}
	if !hmac.Equal([]byte(Commitment(seed)), []byte(commitHex)) {
		return errors.New("draw: sha256(seed) is not the published commitment")
	}
	seen := make(map[int64]bool, len(drawn))
	for _, t := range drawn {
		if seen[t] {
			return fmt.Errorf("draw: ticket %d appears twice", t)
		}
		seen[t] = true
	}
	want := Tickets(seed, drawn)
	for i := range want {
		if want[i] != drawn[i] {
			return fmt.Errorf("draw: place %d holds ticket %d, the seed puts ticket %d there", i+1, drawn[i], want[i])
		}
	}
	return nil
}
