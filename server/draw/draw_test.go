package draw

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
)

// TestChiSquare checks over many draws that every ticket is equally likely
// at every place. The seeds are fixed, so the test is deterministic; a
// biased order (say, by ticket) gives a statistic in the thousands.
func TestChiSquare(t *testing.T) {
	const k, draws = 8, 16000
	tickets := []int64{3, 17, 18, 19, 250, 1000, 1001, 99999}
	var counts [k][k]int
	for d := range draws {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(d))
		seed := sha256.Sum256(b[:])
		for place, i := range Order(seed[:], tickets) {
			counts[i][place]++
		}
	}
	expect := float64(draws) / k
	var chi float64
	for i := range k {
		for p := range k {
			d := float64(counts[i][p]) - expect
			chi += d * d / expect
		}
	}
	// 49 degrees of freedom; P(chi² > 85.35) = 0.001.
	if chi > 85.35 {
		t.Fatalf("chi-square %.1f over 49 degrees of freedom: the draw is biased: %v", chi, counts)
	}
	t.Logf("chi-square %.1f (49 degrees of freedom)", chi)
}

func TestOrderIsHMACAscending(t *testing.T) {
	seed, _ := hex.DecodeString(strings.Repeat("ab", 32))
	tickets := []int64{1, 2, 3, 10, 11, 12345678}
	got := Tickets(seed, tickets)
	for i := 1; i < len(got); i++ {
		a, b := Key(seed, got[i-1]), Key(seed, got[i])
		if string(a[:]) >= string(b[:]) {
			t.Fatalf("place %d and %d out of HMAC order", i-1, i)
		}
	}
	if slices.Equal(got, tickets) {
		t.Fatal("the draw kept ticket order")
	}
}

func TestVerify(t *testing.T) {
	seed, _ := hex.DecodeString(strings.Repeat("5a", 32))
	seedHex := hex.EncodeToString(seed)
	drawn := Tickets(seed, []int64{1, 2, 3, 4, 5, 6, 7})
	commit := Commitment(seed)
	if err := Verify(commit, seedHex, drawn); err != nil {
		t.Fatal(err)
	}
	swapped := slices.Clone(drawn)
	swapped[0], swapped[1] = swapped[1], swapped[0]
	dup := slices.Clone(drawn)
	dup[1] = dup[0]
	tests := []struct {
		name, commit, seed string
		drawn              []int64
		want               string
	}{
		{"swapped places", commit, seedHex, swapped, "place 1"},
		{"duplicate ticket", commit, seedHex, dup, "twice"},
		{"wrong commitment", Commitment([]byte("x")), seedHex, drawn, "commitment"},
		{"short seed", commit, "abcd", drawn, "32 bytes"},
	}
	for _, tt := range tests {
		if err := Verify(tt.commit, tt.seed, tt.drawn); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error about %q", tt.name, err, tt.want)
		}
	}
}

// TestSorted checks Sorted against a plain sort of the keys by their
// bytes, for keys that share their bucket (first two bytes), their first
// eight bytes, or all but the last byte.
func TestSorted(t *testing.T) {
	key := func(head string, last byte) [sha256.Size]byte {
		var k [sha256.Size]byte
		copy(k[:], head)
		k[sha256.Size-1] = last
		return k
	}
	for _, tc := range []struct {
		name string
		keys [][sha256.Size]byte
	}{
		{"none", nil},
		{"one", [][sha256.Size]byte{key("a", 1)}},
		{"one bucket", [][sha256.Size]byte{key("ab\x03", 0), key("ab\x01", 0), key("ab\x02", 0)}},
		{"same first eight bytes", [][sha256.Size]byte{key("abcdefgh\x02", 0), key("abcdefgh\x01", 0), key("abcdefgg", 0)}},
		{"same but the last byte", [][sha256.Size]byte{key("k", 9), key("k", 3), key("k", 7), key("j", 200)}},
		{"first and last buckets", [][sha256.Size]byte{key("\xff\xff", 0), key("", 0), key("\xff\xfe", 0), key("\x00\x01", 0)}},
		{"many, in buckets, some sharing eight bytes", manyKeys(300000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := make([]int, len(tc.keys))
			for i := range want {
				want[i] = i
			}
			slices.SortFunc(want, func(a, b int) int { return bytes.Compare(tc.keys[a][:], tc.keys[b][:]) })
			if got := Sorted(tc.keys); !slices.Equal(got, want) {
				t.Fatalf("Sorted: %v, want %v", got, want)
			}
		})
	}
}

// manyKeys returns n keys, enough for Sorted's buckets: SHA-256 of their
// index, every 97th sharing its first eight bytes with the one before.
func manyKeys(n int) [][sha256.Size]byte {
	keys := make([][sha256.Size]byte, n)
	for i := range keys {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(i))
		keys[i] = sha256.Sum256(b[:])
		if i%97 == 0 && i > 0 {
			copy(keys[i][:8], keys[i-1][:8])
		}
	}
	return keys
}

// TestOrderOfManyTickets checks Order on enough tickets to spread Keys
// over several goroutines and sort them in buckets: it is the tickets
// sorted by Key.
func TestOrderOfManyTickets(t *testing.T) {
	seed, _ := hex.DecodeString(strings.Repeat("c3", 32))
	tickets := make([]int64, 300000)
	for i := range tickets {
		tickets[i] = int64(3*i + 7)
	}
	keys := make([][sha256.Size]byte, len(tickets))
	want := make([]int, len(tickets))
	for i := range want {
		keys[i], want[i] = Key(seed, tickets[i]), i
	}
	slices.SortFunc(want, func(a, b int) int { return bytes.Compare(keys[a][:], keys[b][:]) })
	if got := Order(seed, tickets); !slices.Equal(got, want) {
		t.Fatal("Order differs from the tickets sorted by Key")
	}
}
