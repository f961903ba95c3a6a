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

// ScrapeRoom reads the named Prometheus series of one room (label
// room="<room>") from a /metrics URL: each series by name, and by the
// value of its label by (when not ""), summed over the other labels, as
// "name" or "name/value".
func ScrapeRoom(ctx context.Context, url, room, by string, names ...string) (map[string]float64, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	err := scrape(ctx, url, func(name, labels string, v float64) {
		if !want[name] {
			return
		}
		l := parseLabels(labels)
		if l["room"] != room {
			return
		}
		if by != "" {
			if val, ok := l[by]; ok {
				out[name+"/"+val] += v
			}
		}
		out[name] += v
	})
	return out, err
}

// parseLabels reads `a="x",b="y"` (values without commas or quotes).
func parseLabels(labels string) map[string]string {
	out := map[string]string{}
	for part := range strings.SplitSeq(labels, ",") {
		if k, v, ok := strings.Cut(part, "="); ok {
			out[strings.TrimSpace(k)] = strings.Trim(v, `"`)
		}
	}
	return out
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
