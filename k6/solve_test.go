package k6

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/altcha-org/altcha-lib-go"
)

const testHMACKey = "solve-test-hmac-key"

func testChallenge(t testing.TB, maxNumber, number int64) altcha.Challenge {
	t.Helper()
	expires := time.Now().Add(2 * time.Minute)
	c, err := altcha.CreateChallenge(altcha.ChallengeOptions{HMACKey: testHMACKey, MaxNumber: maxNumber, Number: &number,
		Expires: &expires, Params: url.Values{"room": {"sale"}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSolve: the solver finds the number of challenges the ALTCHA library
// made, and the library verifies the payload it answers.
func TestSolve(t *testing.T) {
	tests := []struct {
		name              string
		maxNumber, number int64
	}{
		{"zero", 1000, 0},
		{"one", 1000, 1},
		{"the last one", 1000, 1000},
		{"a round number", 50_000, 10_000},
		{"a large one", 200_000, 123_457},
		{"maxNumber zero", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testChallenge(t, tt.maxNumber, tt.number)
			got, err := Solve(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if got.Number != tt.number || got.Hashes != tt.number+1 {
				t.Fatalf("number %d after %d hashes, want %d after %d", got.Number, got.Hashes, tt.number, tt.number+1)
			}
			if ok, err := altcha.VerifySolutionSafe(got.Payload, testHMACKey, true); !ok || err != nil {
				t.Fatalf("the library refuses the payload %s: %v", got.Payload, err)
			}
		})
	}
}

func TestSolveRefuses(t *testing.T) {
	good := testChallenge(t, 100, 50)
	past := testChallenge(t, 100, 50)
	past.MaxNumber = 40 // the number is beyond the search
	sha1 := good
	sha1.Algorithm = "SHA-1"
	short := good
	short.Challenge = good.Challenge[:10]
	huge := good
	huge.MaxNumber = 1 << 40
	tests := []struct {
		name string
		c    altcha.Challenge
		err  string
	}{
		{"not found", past, "no number"},
		{"another algorithm", sha1, "algorithm"},
		{"a short challenge", short, "not a hex"},
		{"an absurd maxNumber", huge, "out of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Solve(context.Background(), tt.c); err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want one with %q", err, tt.err)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Solve(ctx, testChallenge(t, 1_000_000, 999_999)); err == nil {
		t.Fatal("a cancelled search answered no error")
	}
}

// BenchmarkSolve measures the tools' solver in hashes per second: each
// operation is a search to the end of a 100,000 challenge.
func BenchmarkSolve(b *testing.B) {
	const n = 100_000
	c := testChallenge(b, n, n)
	ctx := context.Background()
	for b.Loop() {
		if _, err := Solve(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*(n+1)/b.Elapsed().Seconds(), "hashes/s")
}

// BenchmarkLibrarySolve is the ALTCHA library's SolveChallenge on the same
// search, for comparison.
func BenchmarkLibrarySolve(b *testing.B) {
	const n = 100_000
	c := testChallenge(b, n, n)
	for b.Loop() {
		s, err := altcha.SolveChallenge(c.Challenge, c.Salt, altcha.SHA256, n, 0, nil)
		if err != nil || s == nil {
			b.Fatal("not solved", err)
		}
	}
	b.ReportMetric(float64(b.N)*(n+1)/b.Elapsed().Seconds(), "hashes/s")
}
