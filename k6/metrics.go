package k6

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Scrape reads the named Prometheus series (without labels, summed over
// their label sets) from a /metrics URL.
func Scrape(ctx context.Context, url string, names ...string) (map[string]float64, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	err := scrape(ctx, url, func(name, _ string, v float64) {
		if want[name] {
			out[name] += v
		}
	})
	return out, err
}

// ScrapeBy reads one Prometheus series from a /metrics URL by the value of
// one of its labels, summed over the others.
func ScrapeBy(ctx context.Context, url, name, label string) (map[string]float64, error) {
	out := map[string]float64{}
	err := scrape(ctx, url, func(n, labels string, v float64) {
		if n != name {
			return
		}
		for part := range strings.SplitSeq(labels, ",") {
			if k, val, ok := strings.Cut(part, "="); ok && strings.TrimSpace(k) == label {
				out[strings.Trim(val, `"`)] += v
			}
		}
	})
	return out, err
}

// scrape reads a /metrics URL and calls each for every sample: its name,
// its labels (`a="x",b="y"`) and its value.
func scrape(ctx context.Context, url string, each func(name, labels string, v float64)) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("scrape %s: %s", url, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		labels := ""
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name = name[:i]
			if j := strings.LastIndexByte(line, '}'); j >= 0 {
				labels = line[i+1 : j]
				rest = strings.TrimSpace(line[j+1:])
			}
		}
		if v, err := strconv.ParseFloat(strings.Fields(rest)[0], 64); err == nil {
			each(name, labels, v)
		}
	}
	return sc.Err()
}
