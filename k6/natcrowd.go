package k6

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// NATCrowd is a legitimate crowd behind one address (carrier-grade NAT):
// N buyers, each with its own cookie jar, all from 127.0.0.1 without
// X-Forwarded-For, arriving evenly within Window; each enters the room,
// solving the challenge the room asks for.
type NATCrowd struct {
	URL, Room string
	N         int
	Window    time.Duration
	// Timeout bounds the whole run.
	Timeout time.Duration
	// PhoneHPS is the assumed phone's SHA-256 hashes per second, which
	// turns a solution's hashes into the phone-equivalent time.
	PhoneHPS float64
	// Expiry is the challenges' lifetime (0: 2 minutes): a phone whose
	// search takes longer could never join.
	Expiry time.Duration
	// Solvers bounds the searches under way (0: GOMAXPROCS): the crowd
	// shares this machine's cores, where each buyer has a phone of its own.
	Solvers  int
	Progress io.Writer
	// ProgressEvery is the interval of the progress lines (0: the default).
	ProgressEvery time.Duration
}

// NATCrowdReport is what the crowd went through.
type NATCrowdReport struct {
	N, Joined, Challenged int
	// Retried counts the buyers refused 429 or 503 at least once, who
	// tried again after Retry-After as the page does.
	Retried int
	// Expired counts the solutions that expired before they were sent.
	Expired int
	// Took is each joined buyer's time from arrival to its place, sorted.
	Took []time.Duration
	// Refused counts the buyers without a place, by status and error.
	Refused map[string]int64
	// Wall is the time each challenged buyer spent on the challenge here
	// (fetch, a wait for a core, the search), sorted.
	Wall []time.Duration
	// Phone is the same search's time on the assumed phone, sorted.
	Phone []time.Duration
	// MaxNumber is the issued challenges' maxNumber, sorted.
	MaxNumber []int64
	PhoneHPS  float64
	// OverExpiry counts the challenged buyers whose phone-equivalent time
	// exceeds Expiry: on the assumed phone they could never join.
	OverExpiry int
	Expiry     time.Duration
	Elapsed    time.Duration
}

// Validate returns an error for a crowd that is unbounded or aims anywhere
// but loopback.
func (c NATCrowd) Validate() error {
	if err := (Load{URL: c.URL, Concurrency: 1, Duration: time.Second}).Validate(); err != nil {
		return err
	}
	switch {
	case c.Room == "":
		return errors.New("natcrowd: no room")
	case c.N < 1 || c.N > 50_000:
		return fmt.Errorf("natcrowd: n %d out of 1..50000", c.N)
	case c.Window <= 0 || c.Timeout <= 0 || c.Timeout > time.Hour:
		return errors.New("natcrowd: window and timeout must be positive, timeout at most 1h")
	case c.PhoneHPS <= 0:
		return errors.New("natcrowd: the phone's hash rate must be positive")
	}
	return nil
}

// Run runs the crowd.
func (c NATCrowd) Run(ctx context.Context) (NATCrowdReport, error) {
	if err := c.Validate(); err != nil {
		return NATCrowdReport{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	solvers := c.Solvers
	if solvers <= 0 {
		solvers = runtime.GOMAXPROCS(0)
	}
	slots := make(chan struct{}, solvers)
	tr := &http.Transport{MaxIdleConnsPerHost: 1000, DisableCompression: true}
	defer tr.CloseIdleConnections()
	joins := make([]crowdJoin, c.N)
	var entered, done atomic.Int64
	start := time.Now()
	if c.Progress != nil {
		stop := every(c.ProgressEvery, func() {
			fmt.Fprintf(c.Progress, "natcrowd, %.0f s: %d of %d arrived, %d answered\n",
				time.Since(start).Seconds(), entered.Load(), c.N, done.Load())
		})
		defer stop()
	}
	var wg sync.WaitGroup
	for i := range c.N {
		at := start.Add(time.Duration(int64(c.Window) * int64(i) / int64(c.N)))
		wg.Go(func() {
			select {
			case <-ctx.Done():
				joins[i] = crowdJoin{Join: Join{Error: "timeout"}}
				return
			case <-time.After(time.Until(at)):
			}
			entered.Add(1)
			e := Entrant{Client: NewGateClient(tr), Base: c.URL, Room: c.Room, Solvers: slots}
			joins[i] = c.buyer(ctx, e, at)
			done.Add(1)
		})
	}
	wg.Wait()
	return c.report(joins, time.Since(start)), nil
}

// crowdJoin is a buyer's way in: its last answer, the refusals it retried
// after (429 or 503, as the page does after Retry-After), and how long from
// its arrival to its place. Its Hashes and Challenge add up every
// attempt's.
type crowdJoin struct {
	Join
	Retried int
	// Expired counts the solutions the server found expired (solved too
	// late in this simulation, where the crowd shares the cores); the
	// buyer fetched a new challenge each time.
	Expired int
	Took    time.Duration
}

// buyer enters as the page does: a 429 or a 503 is tried again after its
// Retry-After (5 s when none), an expired challenge with a new one after
// 2, 4, 8 s (three times at most), until the run's end. The time and hashes
// of every attempt's challenge add up.
func (c NATCrowd) buyer(ctx context.Context, e Entrant, arrived time.Time) crowdJoin {
	var cj crowdJoin
	var spent time.Duration
	var hashes int64
	for {
		j, err := e.Enter(ctx)
		spent, hashes = spent+j.Challenge, hashes+j.Hashes
		if err != nil && j.Error == "" {
			j.Error = "no answer"
		}
		cj.Join = j
		var wait time.Duration
		switch {
		case j.Status == http.StatusPreconditionRequired && j.Error == "challenge_expired" && cj.Expired < 3:
			// Solved too late here: the page tries a new challenge after
			// 2, 4, 8 s.
			cj.Expired++
			wait = time.Duration(1<<cj.Expired) * time.Second
		case j.Status == http.StatusTooManyRequests || j.Status == http.StatusServiceUnavailable:
			cj.Retried++
			wait = j.RetryAfter
			if wait <= 0 {
				wait = 5 * time.Second
			}
		}
		if wait == 0 {
			break
		}
		select {
		case <-ctx.Done():
			cj.Error = "timeout"
			return cj
		case <-time.After(wait):
		}
	}
	cj.Challenge, cj.Hashes, cj.Took = spent, hashes, time.Since(arrived)
	return cj
}

// report reduces the joins.
func (c NATCrowd) report(joins []crowdJoin, elapsed time.Duration) NATCrowdReport {
	r := NATCrowdReport{N: c.N, PhoneHPS: c.PhoneHPS, Elapsed: elapsed, Expiry: c.Expiry}
	if r.Expiry <= 0 {
		r.Expiry = 2 * time.Minute
	}
	var refused Tally
	for _, j := range joins {
		if j.Retried > 0 {
			r.Retried++
		}
		r.Expired += j.Expired
		if j.Status == http.StatusOK {
			r.Joined++
			r.Took = append(r.Took, j.Took)
		} else {
			refused.Add(j.Refusal())
		}
		if !j.Challenged || j.Hashes == 0 {
			continue
		}
		r.Challenged++
		r.Wall = append(r.Wall, j.Challenge)
		phone := time.Duration(float64(j.Hashes) / c.PhoneHPS * float64(time.Second))
		if phone > r.Expiry {
			r.OverExpiry++
		}
		r.Phone = append(r.Phone, phone)
		r.MaxNumber = append(r.MaxNumber, j.MaxNumber)
	}
	r.Refused = refused.Counts()
	slices.Sort(r.Took)
	slices.Sort(r.Wall)
	slices.Sort(r.Phone)
	slices.Sort(r.MaxNumber)
	return r
}

// Check fails a crowd that did not all join.
func (r NATCrowdReport) Check() error {
	if r.Joined != r.N {
		return fmt.Errorf("natcrowd: %d of %d buyers joined; refused: %s", r.Joined, r.N, FormatCounts(r.Refused))
	}
	return nil
}

func (r NATCrowdReport) String() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
	return fmt.Sprintf("natcrowd: %d buyers behind one address: %d joined, %d challenged, %d retried after a 429/503, %d solutions expired, refused: %s, in %.1f s\n"+
		"  arrival to place: p50 %s, p95 %s, max %s\n"+
		"  time on the challenge, here (wall, sharing this machine's cores): p50 %s, p95 %s, max %s\n"+
		"  time on the challenge, phone-equivalent (hashes / %.0f hashes/s): p50 %s, p95 %s, max %s; %d over the challenge's %v expiry\n"+
		"  issued maxNumber: p50 %d, p95 %d, max %d\n",
		r.N, r.Joined, r.Challenged, r.Retried, r.Expired, FormatCounts(r.Refused), r.Elapsed.Seconds(),
		ms(Percentile(r.Took, 50)), ms(Percentile(r.Took, 95)), ms(Percentile(r.Took, 100)),
		ms(Percentile(r.Wall, 50)), ms(Percentile(r.Wall, 95)), ms(Percentile(r.Wall, 100)),
		r.PhoneHPS, ms(Percentile(r.Phone, 50)), ms(Percentile(r.Phone, 95)), ms(Percentile(r.Phone, 100)), r.OverExpiry, r.Expiry,
		PercentileInt(r.MaxNumber, 50), PercentileInt(r.MaxNumber, 95), PercentileInt(r.MaxNumber, 100))
}
