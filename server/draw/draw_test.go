package draw

import (
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
