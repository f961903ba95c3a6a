package k6

import (
	"strings"
	"testing"
)

// TestBenchmarksFailOverOnePercent: a benchmark whose answers are more
// than 1% other than expected fails, naming what it got.
func TestBenchmarksFailOverOnePercent(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string // "" for no error
	}{
		{"loadtest: 1% of 429s is tolerated", CheckStatus("enter", map[int]int{200: 990, 429: 10}, 0, []int{200}, MaxUnexpected), ""},
		{"loadtest: just over 1% fails", CheckStatus("enter", map[int]int{200: 989, 429: 11}, 0, []int{200}, MaxUnexpected),
			"enter: 11 of 1000 answers (1.10%) were unexpected, over the 1% a benchmark allows (expected 200; got 429: 11)"},
		{"loadtest: the per-IP limit answering", CheckStatus("enter", map[int]int{200: 60, 429: 146598}, 0, []int{200}, MaxUnexpected),
			"146598 of 146658 answers (99.96%)"},
		{"loadtest: transport errors count", CheckStatus("enter", map[int]int{200: 98}, 2, []int{200}, MaxUnexpected),
			"got transport errors: 2"},
		{"loadtest: no answer at all", CheckStatus("enter", map[int]int{}, 0, []int{200}, MaxUnexpected), "enter: no answers at all"},
		{"loadtest: several expected statuses", CheckStatus("x", map[int]int{201: 50, 409: 50}, 0, []int{201, 409}, MaxUnexpected), ""},
		{"loadtest: a looser bound on purpose", CheckStatus("x", map[int]int{201: 10, 503: 90}, 0, []int{201}, 1), ""},
		{"burst: never admitted counts", Summarise(BurstReport{Samples: samples(97, 201, 3, 0)}).Check([]int{201}, MaxUnexpected),
			"burst: 3 of 100 answers (3.00%) were unexpected, over the 1% a benchmark allows (expected 201; got never admitted: 3)"},
		{"burst: one in a hundred is tolerated", Summarise(BurstReport{Samples: samples(99, 201, 1, 503)}).Check([]int{201}, MaxUnexpected), ""},
		{"soak: every visitor connected", Report{Mode: "sse", Visitors: 100, Connected: 100}.Check(MaxUnexpected), ""},
		{"soak: refused streams", Report{Mode: "sse", Visitors: 100, Connected: 97, Failed: 3}.Check(MaxUnexpected),
			"soak: 3 of 100 answers (3.00%) were unexpected, over the 1% a benchmark allows (expected 200; 3 of 100 visitors never connected (3 refused or failed))"},
		{"soak: visitors still connecting at the end", Report{Mode: "sse", Visitors: 100, Connected: 90}.Check(MaxUnexpected),
			"10 of 100 visitors never connected (0 refused or failed)"},
		{"soak: failed polls", Report{Mode: "poll", Visitors: 100, Connected: 100, PollAnswers: 800, PollErrors: 100}.Check(MaxUnexpected),
			"100 of 1000 answers (10.00%) were unexpected, over the 1% a benchmark allows (expected 200; 0 of 100 visitors never connected (0 refused or failed), 100 of 900 polls failed)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			switch {
			case tt.want == "" && tt.err != nil:
				t.Fatalf("unexpected failure: %v", tt.err)
			case tt.want != "" && (tt.err == nil || !strings.Contains(tt.err.Error(), tt.want)):
				t.Fatalf("error %v, want one containing %q", tt.err, tt.want)
			}
		})
	}
}

// samples makes a buyers with status sa and b with status sb.
func samples(a, sa, b, sb int) []Sample {
	var out []Sample
	for range a {
		out = append(out, Sample{Status: sa})
	}
	for range b {
		out = append(out, Sample{Status: sb})
	}
	return out
}

func TestParseStatuses(t *testing.T) {
	if got, err := ParseStatuses("201, 409,410"); err != nil || len(got) != 3 || got[1] != 409 {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"", "20x", "99", "600", "201,"} {
		if _, err := ParseStatuses(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
