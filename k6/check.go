package k6

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxUnexpected is the share of a benchmark's answers that may be other
// than the status it expects. Past it the run measured something else (a
// 429 is fast, a refused stream costs nothing), so its figures are void
// and the tool fails.
const MaxUnexpected = 0.01

// CheckShare returns an error, naming what went wrong, when more than max
// of total answers were unexpected, or when there were no answers at all.
func CheckShare(name string, unexpected, total int, max float64, detail string) error {
	if total <= 0 {
		return fmt.Errorf("%s: no answers at all", name)
	}
	share := float64(unexpected) / float64(total)
	if share <= max {
		return nil
	}
	return fmt.Errorf("%s: %d of %d answers (%.2f%%) were unexpected, over the %s%% a benchmark allows (%s): its figures measure something else",
		name, unexpected, total, 100*share, strconv.FormatFloat(100*max, 'f', -1, 64), detail)
}

// CheckStatus returns an error when more than max of the answers, counted
// by HTTP status, plus transport errors, are not one of expected.
func CheckStatus(name string, status map[int]int, transportErrors int, expected []int, max float64) error {
	unexpected, total := transportErrors, transportErrors
	codes := make([]int, 0, len(status))
	for c := range status {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var mix []string
	for _, c := range codes {
		total += status[c]
		if !slices.Contains(expected, c) {
			unexpected += status[c]
			mix = append(mix, fmt.Sprintf("%s: %d", statusName(c), status[c]))
		}
	}
	if transportErrors > 0 {
		mix = append(mix, fmt.Sprintf("transport errors: %d", transportErrors))
	}
	want := make([]string, len(expected))
	for i, c := range expected {
		want[i] = strconv.Itoa(c)
	}
	return CheckShare(name, unexpected, total, max, "expected "+strings.Join(want, " or ")+"; got "+strings.Join(mix, ", "))
}

// ParseStatuses reads a comma-separated list of HTTP statuses.
func ParseStatuses(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 100 || c > 599 {
			return nil, fmt.Errorf("bad HTTP status %q in %q", f, list)
		}
		out = append(out, c)
	}
	return out, nil
}

// statusName names the burst's pseudo-statuses.
func statusName(c int) string {
	switch c {
	case 0:
		return "never admitted"
	case 599:
		return "transport error"
	}
	return strconv.Itoa(c)
}
