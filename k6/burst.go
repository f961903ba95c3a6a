package k6

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Burst simulates a flash sale: N buyers enter within Within, follow their
// stream until they are let in, then order. It measures what the buyers
// see: time to admission and order latency.
type Burst struct {
	// URLs are the server instances; buyers are spread over them.
	URLs []string
	Room string
	N    int
	// Within spreads the enters over this long.
	Within time.Duration
	// Timeout bounds the whole run.
	Timeout   time.Duration
	SourceIPs int
	// FirstIP offsets the source addresses (for child processes).
	FirstIP int
	// Progress, when set, receives a progress line every ProgressEvery
	// (DefaultProgressEvery when zero) while the burst runs.
	Progress      io.Writer
	ProgressEvery time.Duration
}

// burstCounts are a running burst's figures, for its progress lines.
type burstCounts struct {
	entered, admitted, answered, created, soldOut atomic.Int64
}

// Sample is one buyer's outcome.
type Sample struct {
	// Admitted is how long from the enter to the ready event (0: never).
	Admitted time.Duration `json:"a"`
	// Order is the latency of the order request (0: none sent).
	Order time.Duration `json:"o"`
	// Done is when the order answered, in Unix milliseconds.
	Done int64 `json:"d"`
	// Status is the order's HTTP status, or 0 for a buyer never let in.
	Status int `json:"s"`
}

// BurstReport is the raw outcome of a burst; Summary reduces it.
type BurstReport struct {
	Samples []Sample `json:"samples"`
	Elapsed float64  `json:"elapsed"`
}

// Validate returns an error for a burst that is unbounded or aims anywhere
// but loopback.
func (b Burst) Validate() error {
	if len(b.URLs) == 0 {
		return errors.New("burst: no URL")
	}
	for _, u := range b.URLs {
		if err := (Load{URL: u, Concurrency: 1, Duration: time.Second}).Validate(); err != nil {
			return err
		}
	}
	switch {
	case b.N < 1 || b.N > 19000:
		return fmt.Errorf("burst: n %d out of 1..19000 per process (use -procs)", b.N)
	case b.Within <= 0 || b.Timeout <= 0 || b.Timeout > time.Hour:
		return errors.New("burst: within and timeout must be positive, timeout at most 1h")
	case b.SourceIPs < 1 || b.FirstIP+b.SourceIPs > 250:
		return errors.New("burst: source addresses out of 127.0.0.1..250")
	}
	return nil
}

// Run runs the burst in this process.
func (b Burst) Run(ctx context.Context) (BurstReport, error) {
	if err := b.Validate(); err != nil {
		return BurstReport{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, b.Timeout)
	defer cancel()
	transports := make([]*http.Transport, b.SourceIPs)
	for i := range transports {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+b.FirstIP+i))}, Timeout: 10 * time.Second}
		transports[i] = &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 1000, DisableCompression: true}
	}
	samples := make([]Sample, b.N)
	start := time.Now()
	var counts burstCounts
	if b.Progress != nil {
		stop := every(b.ProgressEvery, func() {
			fmt.Fprintf(b.Progress, "burst, %.0f s: %d of %d entered, %d admitted, %d sold out while waiting, %d orders answered (%d × 201)\n",
				time.Since(start).Seconds(), counts.entered.Load(), b.N, counts.admitted.Load(), counts.soldOut.Load(),
				counts.answered.Load(), counts.created.Load())
		})
		defer stop()
	}
	var wg sync.WaitGroup
	for i := range b.N {
		at := start.Add(time.Duration(rand.Int64N(int64(b.Within))))
		wg.Go(func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(at)):
			}
			base := b.URLs[i%len(b.URLs)]
			jar, _ := cookiejar.New(nil)
			hc := &http.Client{Transport: transports[i%len(transports)], Jar: jar, Timeout: 2 * time.Minute}
			samples[i] = b.buyer(ctx, hc, base, &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+b.FirstIP+i%b.SourceIPs))}, &counts)
		})
	}
	wg.Wait()
	return BurstReport{Samples: samples, Elapsed: time.Since(start).Seconds()}, nil
}

// buyer is one buyer: enter (solving the room's challenge, if any), wait for ready over SSE, order (retrying a
// 429 or 503 as the page's retry button would, at most 5 times).
func (b Burst) buyer(ctx context.Context, hc *http.Client, base string, local *net.TCPAddr, counts *burstCounts) Sample {
	entered := time.Now()
	api := strings.TrimRight(base, "/") + "/api/rooms/" + url.PathEscape(b.Room)
	if j, err := EnterRoom(ctx, hc, base, b.Room, nil); err != nil || j.Status != http.StatusOK {
		return Sample{}
	}
	counts.entered.Add(1)
	u, _ := url.Parse(base)
	var cookie string
	for _, c := range hc.Jar.Cookies(u) {
		if c.Name == "wr_vid" {
			cookie = c.Name + "=" + c.Value
		}
	}
	rs, err := newRawStream(base, b.Room, local)
	if err != nil {
		return Sample{}
	}
	rs.cookie = cookie
	sctx, stop := context.WithCancel(ctx)
	var tok string
	var soldOut bool
	rs.run(sctx, func(bool, time.Duration, error) {}, func(_ int64, name, data []byte) {
		switch string(name) {
		case "ready":
			tok = jsonString(data, `"entryToken":`)
			stop()
		case "soldout":
			soldOut = true
			stop()
		}
	})
	stop()
	if tok == "" {
		if soldOut {
			counts.soldOut.Add(1)
			return Sample{Status: http.StatusGone}
		}
		return Sample{}
	}
	counts.admitted.Add(1)
	s := Sample{Admitted: time.Since(entered)}
	defer func() {
		if s.Status != 0 {
			counts.answered.Add(1)
		}
		if s.Status == http.StatusCreated {
			counts.created.Add(1)
		}
	}()
	for attempt := 0; attempt < 5 && ctx.Err() == nil; attempt++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, api+"/orders", bytes.NewReader([]byte(`{"quantity":1}`)))
		req.Header.Set("X-Entry-Token", tok)
		req.Header.Set("Content-Type", "application/json")
		t0 := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			s.Status = 599
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		s.Order, s.Done, s.Status = time.Since(t0), time.Now().UnixMilli(), resp.StatusCode
		if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
			break
		}
		wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(max(wait, 1)) * time.Second):
		}
	}
	return s
}

// jsonString reads the string after key in a flat JSON object.
func jsonString(b []byte, key string) string {
	s := string(b)
	i := strings.Index(s, key)
	if i < 0 {
		return ""
	}
	s = strings.TrimSpace(s[i+len(key):])
	if !strings.HasPrefix(s, `"`) {
		return ""
	}
	s = s[1:]
	end := strings.IndexByte(s, '"')
	if end < 0 {
		return ""
	}
	return s[:end]
}

// BurstSummary is what BENCHMARKS.md quotes of a burst.
type BurstSummary struct {
	Buyers, Admitted, Ordered, NeverAdmitted int
	AdmissionP50, AdmissionP95, AdmissionMax time.Duration
	OrderP50, OrderP95, OrderP99             time.Duration
	Status                                   map[int]int
	Elapsed                                  float64
}

// Summarise merges reports (from several processes) into one summary.
func Summarise(reports ...BurstReport) BurstSummary {
	s := BurstSummary{Status: map[int]int{}}
	var adm, ord []time.Duration
	for _, r := range reports {
		s.Elapsed = max(s.Elapsed, r.Elapsed)
		for _, x := range r.Samples {
			s.Buyers++
			if x.Admitted > 0 {
				s.Admitted++
				adm = append(adm, x.Admitted)
			} else if x.Status != http.StatusGone {
				s.NeverAdmitted++
			}
			if x.Order > 0 {
				ord = append(ord, x.Order)
			}
			s.Status[x.Status]++
			if x.Status == http.StatusCreated {
				s.Ordered++
			}
		}
	}
	slices.Sort(adm)
	slices.Sort(ord)
	s.AdmissionP50, s.AdmissionP95 = Percentile(adm, 50), Percentile(adm, 95)
	if len(adm) > 0 {
		s.AdmissionMax = adm[len(adm)-1]
	}
	s.OrderP50, s.OrderP95, s.OrderP99 = Percentile(ord, 50), Percentile(ord, 95), Percentile(ord, 99)
	return s
}

// String formats a summary.
func (s BurstSummary) String() string {
	codes := make([]int, 0, len(s.Status))
	for c := range s.Status {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var mix []string
	for _, c := range codes {
		name := statusName(c)
		if c == http.StatusGone {
			name = "sold out while waiting"
		}
		mix = append(mix, fmt.Sprintf("%s: %d", name, s.Status[c]))
	}
	return fmt.Sprintf("%d buyers in %.1f s: %d admitted, %d ordered\n"+
		"time to admission: p50 %v, p95 %v, max %v\n"+
		"order latency: p50 %v, p95 %v, p99 %v\n"+
		"status mix: %s\n",
		s.Buyers, s.Elapsed, s.Admitted, s.Ordered,
		s.AdmissionP50.Round(time.Millisecond), s.AdmissionP95.Round(time.Millisecond), s.AdmissionMax.Round(time.Millisecond),
		s.OrderP50.Round(time.Millisecond), s.OrderP95.Round(time.Millisecond), s.OrderP99.Round(time.Millisecond),
		strings.Join(mix, ", "))
}

// Check returns an error when more than max of the buyers' outcomes (the
// order's status; 0 for a buyer never let in, 410 for one who saw the sale
// sell out while waiting) are not one of expected.
func (s BurstSummary) Check(expected []int, max float64) error {
	return CheckStatus("burst", s.Status, 0, expected, max)
}

// Second is one second of a burst's timeline.
type Second struct {
	T        int     // seconds since the start
	Admitted float64 // admissions in that second (server side)
	Orders   int     // orders answered in that second
	OrderP95 time.Duration
	DBInUse  float64
}

// Timeline buckets order outcomes by the second they answered, and joins
// the server-side admissions sampled each second (admitted[t] is the
// cumulative count at second t).
func Timeline(start time.Time, reports []BurstReport, admitted, dbInUse []float64) []Second {
	by := map[int][]time.Duration{}
	last := len(admitted) - 1
	for _, r := range reports {
		for _, x := range r.Samples {
			if x.Order > 0 && x.Done > 0 {
				t := int(time.UnixMilli(x.Done).Sub(start).Seconds())
				by[t] = append(by[t], x.Order)
				last = max(last, t)
			}
		}
	}
	out := make([]Second, 0, last+1)
	for t := 0; t <= last; t++ {
		s := Second{T: t, Orders: len(by[t])}
		slices.Sort(by[t])
		s.OrderP95 = Percentile(by[t], 95)
		if t < len(admitted) && t > 0 {
			s.Admitted = admitted[t] - admitted[t-1]
		}
		if t < len(dbInUse) {
			s.DBInUse = dbInUse[t]
		}
		out = append(out, s)
	}
	return out
}

// EncodeReport writes r as one JSON line, the child process's output.
func EncodeReport(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
