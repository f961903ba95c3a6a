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
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ETAPhase is one stretch of an ETA scenario: the room's settings are put
// at its start, then buyers arrive evenly at Arrivals per second for For.
type ETAPhase struct {
	Settings map[string]any
	Backlog  int // buyers who enter at once at the start of the phase
	Arrivals float64
	For      time.Duration
}

// ETAScenario is a sequence of phases against one room; every buyer
// follows their stream until they are let in (and never orders, so that
// with maxActive an unused pass holds its slot until its TTL).
type ETAScenario struct {
	Name   string
	Phases []ETAPhase
}

// ETARun measures what the page's estimated wait is worth: every ETA a
// buyer is shown (at the enter and in every position event) against the
// wait they then really had.
type ETARun struct {
	URL, Room, AdminToken string
	SourceIPs             int
	// Timeout bounds one scenario, its drain included.
	Timeout time.Duration
	// Progress, when set, receives a line every few seconds.
	Progress io.Writer
}

// ETAShown is one ETA a buyer saw: At (since the scenario began), the ETA
// and the wait that remained, in seconds.
type ETAShown struct {
	At        time.Duration
	ETA, Real float64
	Enter     bool // shown in the enter's answer
}

// ETAResult is one scenario's samples and when its phases began.
type ETAResult struct {
	Name        string
	PhaseStarts []time.Duration
	Shown       []ETAShown
	Buyers      int
	NeverIn     int
}

// Validate returns an error for a run that aims anywhere but loopback or
// is unbounded.
func (r ETARun) Validate() error {
	if err := (Load{URL: r.URL, Concurrency: 1, Duration: time.Second}).Validate(); err != nil {
		return err
	}
	switch {
	case r.AdminToken == "":
		return errors.New("eta: the admin token is needed to set the room")
	case r.SourceIPs < 1 || r.SourceIPs > 250:
		return errors.New("eta: source addresses out of 127.0.0.1..250")
	case r.Timeout <= 0 || r.Timeout > time.Hour:
		return errors.New("eta: timeout must be positive and at most 1h")
	}
	return nil
}

// Run runs one scenario and returns every ETA shown, once every buyer is
// in (or the timeout ends the run).
func (r ETARun) Run(ctx context.Context, sc ETAScenario) (ETAResult, error) {
	if err := r.Validate(); err != nil {
		return ETAResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	transports := make([]*http.Transport, r.SourceIPs)
	for i := range transports {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+i))}, Timeout: 10 * time.Second}
		transports[i] = &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 100, DisableCompression: true}
	}
	res := ETAResult{Name: sc.Name}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	n := 0
	buyer := func() {
		i := n
		n++
		res.Buyers++
		wg.Go(func() {
			shown, in := r.buyer(ctx, transports[i%len(transports)], &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+i%r.SourceIPs))}, start)
			mu.Lock()
			res.Shown = append(res.Shown, shown...)
			if !in {
				res.NeverIn++
			}
			mu.Unlock()
		})
	}
	for _, ph := range sc.Phases {
		if err := PutRoom(ctx, r.URL, r.Room, r.AdminToken, ph.Settings); err != nil {
			return res, err
		}
		res.PhaseStarts = append(res.PhaseStarts, time.Since(start))
		if r.Progress != nil {
			fmt.Fprintf(r.Progress, "eta %s, %.0f s: phase %d %v, %d buyers so far\n", sc.Name, time.Since(start).Seconds(), len(res.PhaseStarts), ph.Settings, n)
		}
		for range ph.Backlog {
			buyer()
		}
		began := time.Now()
		for k := 1; ph.Arrivals > 0; k++ {
			at := began.Add(time.Duration(float64(k) / ph.Arrivals * float64(time.Second)))
			if at.Sub(began) > ph.For {
				break
			}
			select {
			case <-ctx.Done():
				return res, ctx.Err()
			case <-time.After(time.Until(at)):
			}
			buyer()
		}
		if rest := time.Until(began.Add(ph.For)); rest > 0 {
			select {
			case <-ctx.Done():
				return res, ctx.Err()
			case <-time.After(rest):
			}
		}
	}
	wg.Wait()
	return res, ctx.Err()
}

// buyer enters, follows the stream until ready, and returns the ETAs it
// was shown with the wait that really remained after each.
func (r ETARun) buyer(ctx context.Context, tr *http.Transport, local *net.TCPAddr, start time.Time) ([]ETAShown, bool) {
	type seen struct {
		at    time.Time
		eta   float64
		enter bool
	}
	var shown []seen
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Transport: tr, Jar: jar, Timeout: 30 * time.Second}
	api := strings.TrimRight(r.URL, "/") + "/api/rooms/" + url.PathEscape(r.Room) + "/queue"
	t0 := time.Now()
	resp, err := hc.Post(api, "", nil)
	if err != nil {
		return nil, false
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, false
	}
	in := time.Time{}
	if jsonString(body, `"status":`) == "READY" {
		in = time.Now()
	} else if eta, ok := jsonNumber(body, `"estimatedWaitSeconds":`); ok {
		shown = append(shown, seen{t0, eta, true})
	}
	if in.IsZero() {
		u, _ := url.Parse(r.URL)
		rs, err := newRawStream(r.URL, r.Room, local)
		if err != nil {
			return nil, false
		}
		for _, c := range jar.Cookies(u) {
			if c.Name == "wr_vid" {
				rs.cookie = c.Name + "=" + c.Value
			}
		}
		sctx, stop := context.WithCancel(ctx)
		rs.run(sctx, func(bool, time.Duration, error) {}, func(_ int64, name, data []byte) {
			switch string(name) {
			case "ready":
				in = time.Now()
				stop()
			case "position":
				if eta, ok := jsonNumber(data, `"estimatedWaitSeconds":`); ok {
					shown = append(shown, seen{time.Now(), eta, false})
				}
			}
		})
		stop()
	}
	if in.IsZero() {
		return nil, false
	}
	out := make([]ETAShown, len(shown))
	for i, s := range shown {
		out[i] = ETAShown{At: s.at.Sub(start), ETA: s.eta, Real: in.Sub(s.at).Seconds(), Enter: s.enter}
	}
	return out, true
}

// jsonNumber reads the number after key in a flat JSON object; false for
// null or a missing key.
func jsonNumber(b []byte, key string) (float64, bool) {
	s := string(b)
	i := strings.Index(s, key)
	if i < 0 {
		return 0, false
	}
	s = strings.TrimSpace(s[i+len(key):])
	end := strings.IndexAny(s, ",}")
	if end < 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(s[:end], 64)
	return f, err == nil
}

// ETAError is the mean absolute error of the ETAs shown in a window,
// relative to the mean real wait (Σ|eta − real| / Σ real), and the count.
type ETAError struct {
	N        int
	MAE      float64 // seconds
	MeanReal float64 // seconds
	Relative float64 // MAE / MeanReal
}

// Error returns the error of the ETAs shown from `from` to `to` (since the
// scenario began) to buyers let in by doneBy (0: whenever), so that a
// window before a settings change counts no wait the change cut short;
// enterOnly keeps the ETAs of the enters' answers alone.
func (res ETAResult) Error(from, to, doneBy time.Duration, enterOnly bool) ETAError {
	var e ETAError
	var abs, real float64
	for _, s := range res.Shown {
		if s.At < from || s.At >= to || (enterOnly && !s.Enter) ||
			(doneBy > 0 && s.At+time.Duration(s.Real*float64(time.Second)) > doneBy) {
			continue
		}
		e.N++
		abs += math.Abs(s.ETA - s.Real)
		real += s.Real
	}
	if e.N == 0 || real == 0 {
		return e
	}
	e.MAE, e.MeanReal, e.Relative = abs/float64(e.N), real/float64(e.N), abs/real
	return e
}

// String formats an error for BENCHMARKS.md.
func (e ETAError) String() string {
	if e.N == 0 {
		return "no ETA in this window"
	}
	return fmt.Sprintf("%5.1f%% (MAE %.1f s over a mean real wait of %.1f s, %d ETAs)", 100*e.Relative, e.MAE, e.MeanReal, e.N)
}
