package k6

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Step is one rate of a calibration: what was asked, what the order path
// did.
type Step struct {
	Target   float64       // orders per second sent
	Actual   float64       // answers per second received in the window
	P95      time.Duration // order latency p95 after the warm-up
	FailRate float64       // answers other than 201, and timeouts
	Orders   int           // orders measured
}

// Calibrate steps the order rate against a room in passthrough mode (no
// queue, no order bucket), as the second seed did with k6: each step sends
// a fresh set of admitted buyers' orders at a fixed rate, after a reset of
// the room's orders and stock, and measures after a warm-up.
type Calibrate struct {
	BaseURL string
	Room    string
	// From, To and By are the rates stepped through (default 20..80 by 10).
	From, To, By float64
	// Duration of each step's measurement, after Warmup.
	Duration, Warmup time.Duration
	SourceIPs        int
	// Prepare resets the room before each step: its orders gone, its
	// stock plenty. It also puts the room in passthrough mode.
	Prepare func(ctx context.Context, stock int64) error
	// StepDone, when set, is told of each finished step.
	StepDone func(Step)
	// Progress, when set, receives a progress line every ProgressEvery
	// (DefaultProgressEvery when zero) while the steps run.
	Progress      io.Writer
	ProgressEvery time.Duration
}

// stepCounts are a running step's figures, for the progress lines.
type stepCounts struct {
	rate                     float64
	n                        int
	admitted, sent, answered atomic.Int64
}

// Run runs every step and returns them.
func (c Calibrate) Run(ctx context.Context) ([]Step, error) {
	if err := (Load{URL: c.BaseURL, Concurrency: 1, Duration: time.Second}).Validate(); err != nil {
		return nil, err
	}
	if c.By <= 0 || c.From <= 0 || c.To < c.From || c.Duration <= 0 || c.Warmup < 0 || c.Prepare == nil {
		return nil, errors.New("calibrate: from, to, by, duration and prepare are required")
	}
	if c.To/c.By > 100 || (c.Duration+c.Warmup).Seconds()*c.To > 50000 {
		return nil, errors.New("calibrate: too many steps or orders for one run")
	}
	var steps []Step
	var current atomic.Pointer[stepCounts]
	if c.Progress != nil {
		start := time.Now()
		stop := every(c.ProgressEvery, func() {
			if sc := current.Load(); sc != nil {
				fmt.Fprintf(c.Progress, "calibrate, %.0f s: step %.0f/s, %d of %d buyers admitted, %d orders sent, %d finished\n",
					time.Since(start).Seconds(), sc.rate, sc.admitted.Load(), sc.n, sc.sent.Load(), sc.answered.Load())
			}
		})
		defer stop()
	}
	for r := c.From; r <= c.To+1e-9; r += c.By {
		sc := &stepCounts{rate: r, n: int(math.Ceil(r * (c.Warmup + c.Duration).Seconds()))}
		current.Store(sc)
		s, err := c.step(ctx, sc)
		if err != nil {
			return steps, fmt.Errorf("calibrate: step %.0f/s: %w", r, err)
		}
		steps = append(steps, s)
		if c.StepDone != nil {
			c.StepDone(s)
		}
	}
	return steps, nil
}

type buyerToken struct {
	client *http.Client
	token  string
}

func (c Calibrate) step(ctx context.Context, sc *stepCounts) (Step, error) {
	rate, n := sc.rate, sc.n
	if err := c.Prepare(ctx, int64(2*n+100)); err != nil {
		return Step{}, err
	}
	buyers, err := c.admit(ctx, n, &sc.admitted)
	if err != nil {
		return Step{}, err
	}
	api := strings.TrimRight(c.BaseURL, "/") + "/api/rooms/" + c.Room + "/orders"
	type result struct {
		start, end time.Time
		status     int
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	begin := time.Now()
	interval := time.Duration(float64(time.Second) / rate)
	for i, b := range buyers {
		at := begin.Add(time.Duration(i) * interval)
		time.Sleep(time.Until(at))
		if ctx.Err() != nil {
			break
		}
		sc.sent.Add(1)
		wg.Go(func() {
			defer sc.answered.Add(1)
			rctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			req, _ := http.NewRequestWithContext(rctx, http.MethodPost, api, strings.NewReader(`{"quantity":1}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Entry-Token", b.token)
			t0 := time.Now()
			resp, err := b.client.Do(req)
			st := 0 // a timeout or a transport error
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				st = resp.StatusCode
			}
			results[i] = result{start: t0, end: time.Now(), status: st}
		})
	}
	wg.Wait()
	from, to := begin.Add(c.Warmup), begin.Add(c.Warmup+c.Duration)
	var lat []time.Duration
	var fails, inWindow int
	for _, r := range results {
		if r.start.IsZero() {
			continue
		}
		if !r.end.Before(from) && !r.end.After(to) {
			inWindow++ // the throughput: answers that arrived in the window
		}
		if r.start.Before(from) {
			continue // latency and failures: orders sent after the warm-up
		}
		lat = append(lat, r.end.Sub(r.start))
		if r.status != http.StatusCreated {
			fails++
		}
	}
	slices.Sort(lat)
	s := Step{Target: rate, Orders: len(lat), P95: Percentile(lat, 95), Actual: float64(inWindow) / c.Duration.Seconds()}
	if len(lat) > 0 {
		s.FailRate = float64(fails) / float64(len(lat))
	}
	return s, nil
}

// admit enters n buyers into the passthrough room and waits for their
// tokens.
func (c Calibrate) admit(ctx context.Context, n int, admitted *atomic.Int64) ([]buyerToken, error) {
	api := strings.TrimRight(c.BaseURL, "/") + "/api/rooms/" + c.Room + "/queue"
	transports := make([]*http.Transport, max(1, c.SourceIPs))
	for i := range transports {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+i))}, Timeout: 10 * time.Second}
		transports[i] = &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 256}
	}
	buyers := make([]buyerToken, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range buyers {
		jar, _ := cookiejar.New(nil)
		buyers[i].client = &http.Client{Transport: transports[i%len(transports)], Jar: jar}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := postNoBody(ctx, buyers[i].client, api); err != nil {
				errs <- err
				return
			}
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) && ctx.Err() == nil {
				tok, err := readyToken(ctx, buyers[i].client, api+"/position")
				if err != nil {
					errs <- err
					return
				}
				if tok != "" {
					buyers[i].token = tok
					admitted.Add(1)
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
			errs <- errors.New("a buyer was not admitted within 30 s")
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return nil, err
	}
	return buyers, nil
}

func postNoBody(ctx context.Context, hc *http.Client, url string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("enter: %s", resp.Status)
	}
	return nil
}

func readyToken(ctx context.Context, hc *http.Client, url string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("position: %s %v", resp.Status, err)
	}
	return jsonString(body, `"entryToken":`), nil
}

// Knee finds the first step where the order path saturated: its p95 jumps
// (above five times the median p95 of the steps before it, and a second
// more), its answers fall behind (under 90% of the target), or its failure
// rate rises (above 5% and three times the steps before). It returns the
// knee's index, or -1 when every step held.
func Knee(steps []Step) int {
	for i, s := range steps {
		if s.Actual < 0.9*s.Target {
			return i
		}
		if i == 0 {
			if s.FailRate > 0.05 {
				return 0
			}
			continue
		}
		var p95s []time.Duration
		var fail float64
		for _, b := range steps[:i] {
			p95s = append(p95s, b.P95)
			fail = max(fail, b.FailRate)
		}
		slices.Sort(p95s)
		base := p95s[len(p95s)/2]
		if s.P95 > 5*base && s.P95 > base+time.Second {
			return i
		}
		if s.FailRate > 0.05 && s.FailRate > 3*fail {
			return i
		}
	}
	return -1
}

// Recommend returns the admission rate to set: the last rate that held,
// less the margin (the seed took 40 of a 50 TPS knee with 20%). It returns
// 0 when even the first step failed. found is false when no knee was found
// in the range, so the last step is only a lower bound.
func Recommend(steps []Step, margin float64) (rate, lastGood float64, found bool) {
	k := Knee(steps)
	switch {
	case len(steps) == 0 || k == 0:
		return 0, 0, k == 0
	case k < 0:
		lastGood = steps[len(steps)-1].Target
	default:
		lastGood = steps[k-1].Target
	}
	return math.Floor(lastGood * (1 - margin)), lastGood, k > 0
}

// FormatSteps prints the seed's table.
func FormatSteps(steps []Step) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| RATE (target TPS) | actual TPS | p95 | failure rate (status≠201 or timeout) |\n|---|---|---|---|\n")
	k := Knee(steps)
	for i, s := range steps {
		mark := ""
		if i == k {
			mark = " ← knee"
		}
		fmt.Fprintf(&b, "| %.0f | %.1f | %v | %.2f%%%s |\n", s.Target, s.Actual, s.P95.Round(time.Millisecond), 100*s.FailRate, mark)
	}
	return b.String()
}
