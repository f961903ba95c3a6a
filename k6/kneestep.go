package k6

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// KneeSteps is calibrate's step table measured on a KneeShop directly:
// for each rate, a fresh shop of the given capacity takes GET /checkout
// at that rate, evenly spaced, for Warmup and then Duration; Knee and
// Recommend read the steps as they read calibrate's. calibrate itself
// steps the built-in order path (passthrough rooms and /api/order), which
// a gate-mode shop does not have: this is its twin for the stand-in shop.
type KneeSteps struct {
	Capacity      float64
	Work, MaxWait time.Duration
	Rates         []float64
	// Warmup is sent before the measure (at least 1.5 × Work); Duration
	// is measured.
	Warmup, Duration time.Duration

	// serve serves each step's shop h and returns its base URL, the
	// transport that reaches it and a stop; nil is loopback TCP. The
	// tests' in-memory transport lets a step run on a simulated clock.
	serve func(h http.Handler) (base string, rt http.RoundTripper, stop func(), err error)
}

// Run measures each step.
func (k KneeSteps) Run(ctx context.Context) ([]Step, error) {
	if len(k.Rates) == 0 || k.Duration <= 0 || k.Warmup < 0 || k.Duration+k.Warmup > 2*time.Minute {
		return nil, fmt.Errorf("knee steps: rates and a step of at most 2m are required")
	}
	var steps []Step
	for _, rate := range k.Rates {
		s, err := k.step(ctx, rate)
		if err != nil {
			return steps, err
		}
		steps = append(steps, s)
	}
	return steps, nil
}

func (k KneeSteps) step(ctx context.Context, rate float64) (Step, error) {
	if rate <= 0 || rate > 10000 {
		return Step{}, fmt.Errorf("knee steps: rate %v out of (0, 10000]", rate)
	}
	shop := NewKneeShop(k.Capacity, k.Work, k.MaxWait)
	serve := k.serve
	if serve == nil {
		serve = serveLoopback
	}
	base, rt, stop, err := serve(shop.Handler())
	if err != nil {
		return Step{}, fmt.Errorf("knee steps: %w", err)
	}
	defer stop()
	client := &http.Client{Transport: rt, Timeout: k.Work + k.MaxWait + 30*time.Second}
	target := base + "/checkout"

	start := time.Now()
	// The warm-up lasts at least one Work, so that the measure's answers
	// are of orders sent at the full rate.
	warmup := max(k.Warmup, k.Work+k.Work/2)
	measureFrom, measureTo := start.Add(warmup), start.Add(warmup+k.Duration)
	gap := time.Duration(float64(time.Second) / rate)
	var (
		mu             sync.Mutex
		took           []time.Duration
		sent, failed   int
		answeredInside int
		wg             sync.WaitGroup
	)
	for at := start; at.Before(measureTo); at = at.Add(gap) {
		select {
		case <-ctx.Done():
			wg.Wait()
			return Step{}, ctx.Err()
		case <-time.After(time.Until(at)):
		}
		measured := !at.Before(measureFrom)
		wg.Go(func() {
			t0 := time.Now()
			status := 0
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
				status = resp.StatusCode
			}
			done := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if !done.Before(measureFrom) && done.Before(measureTo) {
				answeredInside++
			}
			if !measured {
				return
			}
			sent++
			if status != http.StatusOK {
				failed++
				return
			}
			took = append(took, done.Sub(t0))
		})
	}
	wg.Wait()
	slices.Sort(took)
	s := Step{Target: rate, Actual: float64(answeredInside) / k.Duration.Seconds(), P95: durationPercentile(took, 95), Orders: sent}
	if sent > 0 {
		s.FailRate = float64(failed) / float64(sent)
	}
	return s, nil
}

// serveLoopback serves h on a loopback TCP port.
func serveLoopback(h http.Handler) (string, http.RoundTripper, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	tr := &http.Transport{MaxIdleConnsPerHost: 10000}
	stop := func() {
		srv.Close()
		tr.CloseIdleConnections()
	}
	return "http://" + ln.Addr().String(), tr, stop, nil
}

// RatesAround returns the rates from lo to hi times capacity by step
// times capacity (calibrate's 20..80 by 10 around a 50 knee is 0.4..1.6
// by 0.2).
func RatesAround(capacity, lo, hi, step float64) []float64 {
	var out []float64
	for f := lo; f <= hi+1e-9; f += step {
		out = append(out, float64(int(capacity*f+0.5)))
	}
	return out
}
