package k6

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Tally counts outcomes by name (e.g. refusals by status), safely from
// many goroutines.
type Tally struct {
	mu sync.Mutex
	n  map[string]int64
}

// Add counts one more of name.
func (t *Tally) Add(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == nil {
		t.n = map[string]int64{}
	}
	t.n[name]++
}

// Counts returns a copy of the counts.
func (t *Tally) Counts() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int64, len(t.n))
	for k, v := range t.n {
		out[k] = v
	}
	return out
}

// FormatCounts writes counts as "name × n, …" in name order, or "none".
func FormatCounts(counts map[string]int64) string {
	if len(counts) == 0 {
		return "none"
	}
	names := make([]string, 0, len(counts))
	for k := range counts {
		names = append(names, k)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s × %d", k, counts[k])
	}
	return strings.Join(parts, ", ")
}

// PercentileInt returns the nearest-rank p-th percentile of sorted.
func PercentileInt(sorted []int64, p float64) int64 {
	return nearestRank(sorted, p)
}
