// Package k6 holds waitingroom's own load tools. k6 itself cannot be
// installed everywhere, so these Go drivers are the reference; the *.js
// scripts beside them run the same scenarios for users who have k6.
package k6

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
)

// Load describes one closed-loop HTTP load: Concurrency workers each send
// requests back to back until Duration passes or MaxRequests are sent.
type Load struct {
	URL         string
	Method      string
	Concurrency int
	Duration    time.Duration
	MaxRequests int
	// FreshVisitor drops cookies, so every request is a new visitor.
	FreshVisitor bool
	// Header is sent with every request (a session cookie).
	Header http.Header
}

// Result summarises a load run.
type Result struct {
	Requests  int
	Errors    int
	Status    map[int]int
	Elapsed   time.Duration
	Latencies []time.Duration // sorted
}

// RPS returns completed requests per second.
func (r Result) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// Percentile returns the p-th percentile latency (0 < p <= 100), nearest
// rank; 0 when there is none.
func (r Result) Percentile(p float64) time.Duration {
	return Percentile(r.Latencies, p)
}

// Percentile returns the nearest-rank p-th percentile of sorted.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	return nearestRank(sorted, p)
}

// nearestRank returns the nearest-rank p-th percentile of sorted, or the
// zero value of an empty one.
func nearestRank[T any](sorted []T, p float64) T {
	var zero T
	if len(sorted) == 0 {
		return zero
	}
	i := int(float64(len(sorted))*p/100+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// Validate returns an error for a load that is unbounded or aims anywhere
// but loopback.
func (l Load) Validate() error {
	u, err := url.Parse(l.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("load: bad URL %q", l.URL)
	}
	ips, err := net.LookupIP(u.Hostname())
	if err != nil || len(ips) == 0 {
		return fmt.Errorf("load: resolve %q: %v", u.Hostname(), err)
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return fmt.Errorf("load: %s is not a loopback address; loads run on loopback only", ip)
		}
	}
	switch {
	case l.Concurrency < 1 || l.Concurrency > 10000:
		return fmt.Errorf("load: concurrency %d out of 1..10000", l.Concurrency)
	case l.Duration <= 0 || l.Duration > 10*time.Minute:
		return fmt.Errorf("load: duration %v out of (0, 10m]", l.Duration)
	case l.MaxRequests < 0:
		return fmt.Errorf("load: negative request cap")
	}
	return nil
}

// Run drives the load and returns its result. It stops at ctx's end, the
// duration or the request cap, whichever comes first.
func (l Load) Run(ctx context.Context) (Result, error) {
	if err := l.Validate(); err != nil {
		return Result{}, err
	}
	method := l.Method
	if method == "" {
		method = http.MethodGet
	}
	tr := &http.Transport{MaxIdleConns: l.Concurrency, MaxIdleConnsPerHost: l.Concurrency, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	ctx, cancel := context.WithTimeout(ctx, l.Duration)
	defer cancel()

	var (
		mu     sync.Mutex
		res    = Result{Status: map[int]int{}}
		budget = l.MaxRequests
		wg     sync.WaitGroup
	)
	take := func() bool {
		if l.MaxRequests == 0 {
			return true
		}
		mu.Lock()
		defer mu.Unlock()
		if budget == 0 {
			return false
		}
		budget--
		return true
	}
	start := time.Now()
	for range l.Concurrency {
		wg.Go(func() {
			lat := make([]time.Duration, 0, 1024)
			status := map[int]int{}
			errs := 0
			for ctx.Err() == nil && take() {
				req, err := http.NewRequestWithContext(ctx, method, l.URL, nil)
				if err != nil {
					errs++
					break
				}
				for k, v := range l.Header {
					req.Header[k] = v
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						errs++
					}
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat = append(lat, time.Since(t0))
				status[resp.StatusCode]++
			}
			mu.Lock()
			res.Latencies = append(res.Latencies, lat...)
			res.Errors += errs
			for k, v := range status {
				res.Status[k] += v
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Requests = len(res.Latencies)
	slices.Sort(res.Latencies)
	return res, nil
}

// HelloHandler answers every request with a fixed short body: the ceiling
// that a Go HTTP server reaches on this machine.
func HelloHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "hello, world\n")
	})
}
