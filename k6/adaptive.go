package k6

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Adaptive is one room of adaptive admission's measurement, against the
// real server in gate reverse-proxy mode: a KneeShop at ShopAddr (the
// server's ORIGIN_URL) whose capacity follows Schedule, a gate-mode room
// protecting /checkout, and buyers going where a browser goes: enter,
// ready, pass, hand-off, GET /checkout through the proxy (the order). The
// room is adaptive (between MinRate and MaxRate, under TargetP95) or has
// the fixed Rate. The crowd is either a line kept Line long for the
// schedule's length, or N buyers entering within Within.
type Adaptive struct {
	// RoomURL is waitingroom's base URL, ProxyURL its reverse-proxy
	// listener (PROXY_ADDR), MetricsURL its /metrics (METRICS_ADDR: the
	// room's rate, decisions and admissions are read there each second),
	// AdminToken its ADMIN_TOKEN.
	RoomURL, ProxyURL, MetricsURL, AdminToken string
	Room                                      string
	// ShopAddr is where the KneeShop listens: the server's ORIGIN_URL.
	ShopAddr string
	Schedule Schedule
	// Work and MaxWait are the KneeShop's.
	Work, MaxWait time.Duration
	// Adaptive turns the room's controller on, from StartRate (MinRate
	// when 0); otherwise the room admits at Rate.
	Adaptive         bool
	MinRate, MaxRate float64
	StartRate        float64
	TargetP95        time.Duration
	Rate             float64
	// Line keeps this many buyers waiting until the schedule ends (0: a
	// burst of N instead).
	Line int
	// N buyers enter within Within, and the run lasts until each is
	// served or failed (at least the schedule's length).
	N      int
	Within time.Duration
	// Timeout bounds the run.
	Timeout   time.Duration
	SourceIPs int
	// FirstIP offsets the source addresses (127.0.0.(2+FirstIP)...).
	FirstIP int
	// Progress, when set, receives a progress line every ProgressEvery.
	Progress      io.Writer
	ProgressEvery time.Duration
}

// AdaptiveSecond is one second of a run.
type AdaptiveSecond struct {
	T int `json:"t"`
	// Rate is the room's admission rate read at the second's end; Reason
	// the controller's last decision.
	Rate   float64 `json:"rate"`
	Reason string  `json:"reason,omitempty"`
	// Admitted is the passes the room issued that second; Waiting the line.
	Admitted int64 `json:"admitted"`
	Waiting  int64 `json:"waiting"`
	// Served, P95, Rejected and Capacity are the shop's (KneeSecond).
	Served   int           `json:"served"`
	P95      time.Duration `json:"p95"`
	Rejected int           `json:"rejected"`
	Capacity float64       `json:"capacity"`
}

// AdaptiveReport is a run's outcome.
type AdaptiveReport struct {
	Room     string           `json:"room"`
	Adaptive bool             `json:"adaptive"`
	Rate     float64          `json:"rate,omitempty"` // the fixed rate
	Schedule string           `json:"schedule"`
	Target   time.Duration    `json:"targetP95"`
	Seconds  []AdaptiveSecond `json:"seconds"`
	// Buyers entered; Served reached the shop's page (200); Failed did
	// not, ShopFailed of them because the shop answered 5xx after the
	// retries (the others: the room's steps, enter, stream or pass,
	// failed); the rest were still waiting when a Line run ended.
	Buyers, Served, Failed, ShopFailed int
	// Elapsed is from the start to the last buyer served or failed.
	Elapsed time.Duration `json:"elapsed"`
	// OrderP95 is the shop's p95 over every order it served.
	OrderP95 time.Duration `json:"orderP95"`
	// Errors counts the failures by their first words.
	Errors map[string]int64 `json:"errors,omitempty"`
}

// Validate returns an error for a run that is unbounded, aims anywhere
// but loopback, or misses a setting.
func (a Adaptive) Validate() error {
	for _, u := range []string{a.RoomURL, a.ProxyURL, a.MetricsURL} {
		if err := (Load{URL: u, Concurrency: 1, Duration: time.Second}).Validate(); err != nil {
			return fmt.Errorf("adaptive: %w", err)
		}
	}
	host, _, err := net.SplitHostPort(a.ShopAddr)
	switch {
	case err != nil || (host != "127.0.0.1" && host != "localhost"):
		return fmt.Errorf("adaptive: shop address %q is not a loopback host:port", a.ShopAddr)
	case a.AdminToken == "" || a.Room == "":
		return errors.New("adaptive: the admin token and the room are required")
	case len(a.Schedule) == 0:
		return errors.New("adaptive: no schedule")
	case a.Work <= 0 || a.Work > 10*time.Second || a.MaxWait < 0:
		return errors.New("adaptive: work must be in (0, 10s], the wait bound not negative")
	case a.Adaptive && (a.MinRate < 0 || a.MaxRate < a.MinRate || a.MaxRate <= 0 || a.TargetP95 < time.Millisecond):
		return errors.New("adaptive: 0 ≤ minRate ≤ maxRate, maxRate > 0 and a target p95 are required")
	case a.Adaptive && a.StartRate != 0 && (a.StartRate < a.MinRate || a.StartRate > a.MaxRate):
		return errors.New("adaptive: the start rate must be within [minRate, maxRate]")
	case !a.Adaptive && a.Rate <= 0:
		return errors.New("adaptive: a fixed room needs a rate")
	case (a.Line > 0) == (a.N > 0):
		return errors.New("adaptive: either a line to keep or a number of buyers")
	case a.Line > 5000 || a.N > 19000:
		return errors.New("adaptive: at most 5,000 waiting in a line run and 19,000 buyers per process")
	case a.N > 0 && (a.Within <= 0 || a.Within > 10*time.Minute):
		return errors.New("adaptive: the buyers enter within (0, 10m]")
	case a.Timeout <= 0 || a.Timeout > time.Hour || a.Timeout < a.Schedule.Total():
		return errors.New("adaptive: the timeout must cover the schedule, at most 1h")
	case a.SourceIPs < 1 || a.FirstIP+a.SourceIPs > 250:
		return errors.New("adaptive: source addresses out of 127.0.0.2..251")
	}
	return nil
}

// errShop is a buyer's failure at the shop: its page answered other
// than 200 after the retries.
var errShop = errors.New("gate buyer: the shop failed")

// adaptiveCounts are a running crowd's figures.
type adaptiveCounts struct {
	// waiting counts the buyers between their start and their ready
	// event (or their failure before it).
	entered, waiting, served, failed, shopFailed atomic.Int64
	mu                                           sync.Mutex
	errs                                         Tally
	last                                         time.Time
}

func (c *adaptiveCounts) finish(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = time.Now()
	if err == nil {
		c.served.Add(1)
		return
	}
	c.failed.Add(1)
	if errors.Is(err, errShop) {
		c.shopFailed.Add(1)
	}
	msg := err.Error()
	if len(msg) > 80 {
		msg = msg[:80] + "…"
	}
	c.errs.Add(msg)
}

// Run sets the room up, runs the shop and the crowd, samples the room
// each second, then deletes the room.
func (a Adaptive) Run(ctx context.Context) (AdaptiveReport, error) {
	if err := a.Validate(); err != nil {
		return AdaptiveReport{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	shop := NewKneeShop(a.Schedule[0].Capacity, a.Work, a.MaxWait)
	ln, err := net.Listen("tcp", a.ShopAddr)
	if err != nil {
		return AdaptiveReport{}, fmt.Errorf("adaptive: shop: %w", err)
	}
	srv := &http.Server{Handler: shop.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	settings := map[string]any{"title": "adaptive " + a.Room, "maxActive": 0, "abandonAfterSeconds": 0, "paused": false,
		"targetURL": strings.TrimRight(a.ProxyURL, "/") + "/checkout", "sessionSeconds": 600, "sessionMode": "idle",
		"protect": []string{"/checkout"}, "adaptive": a.Adaptive}
	if a.Adaptive {
		settings["rate"], settings["minRate"], settings["maxRate"] = a.startRate(), a.MinRate, a.MaxRate
		settings["targetP95Ms"] = a.TargetP95.Milliseconds()
	} else {
		settings["rate"] = a.Rate
	}
	// A room of that name left by an interrupted run goes first: its line
	// and its rate are not this run's.
	DeleteRoom(ctx, a.RoomURL, a.Room, a.AdminToken)
	if err := PutRoom(ctx, a.RoomURL, a.Room, a.AdminToken, settings); err != nil {
		return AdaptiveReport{}, fmt.Errorf("adaptive: %w", err)
	}
	defer DeleteRoom(context.Background(), a.RoomURL, a.Room, a.AdminToken)

	transports := make([]*http.Transport, a.SourceIPs)
	for i := range transports {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: a.sourceIP(i)}, Timeout: 10 * time.Second}
		transports[i] = &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 1000, DisableCompression: true}
		defer transports[i].CloseIdleConnections()
	}
	start := time.Now()
	shop.Restart()
	go shop.RunSchedule(ctx, a.Schedule)
	var counts adaptiveCounts
	counts.last = start
	smp := &sampler{a: a, start: start}
	stopSampling := every(time.Second, func() { go smp.sample(ctx) })
	if a.Progress != nil {
		stop := every(a.ProgressEvery, func() {
			s := smp.last()
			fmt.Fprintf(a.Progress, "adaptive %s, %.0f s: rate %.1f (%s), capacity %.0f, %d entered, %d waiting, %d served, %d failed\n",
				a.Room, time.Since(start).Seconds(), s.Rate, s.Reason, shop.Capacity(), counts.entered.Load(), counts.waiting.Load(),
				counts.served.Load(), counts.failed.Load())
		})
		defer stop()
	}
	crowdCtx, stopCrowd := context.WithCancel(ctx)
	defer stopCrowd()
	var wg sync.WaitGroup
	buyer := func(i int) {
		counts.entered.Add(1)
		counts.waiting.Add(1)
		wg.Go(func() {
			err := a.buyer(crowdCtx, transports[i%len(transports)], a.sourceIP(i%len(transports)), &counts)
			if crowdCtx.Err() == nil {
				counts.finish(err)
			}
		})
	}
	if a.Line > 0 {
		end := time.After(a.Schedule.Total())
		t := time.NewTicker(50 * time.Millisecond)
	feed:
		for i := 0; ; {
			for int(counts.waiting.Load()) < a.Line {
				buyer(i)
				i++
			}
			select {
			case <-ctx.Done():
				break feed
			case <-end:
				break feed
			case <-t.C:
			}
		}
		t.Stop()
		stopCrowd()
	} else {
		for i := range a.N {
			at := start.Add(time.Duration(int64(a.Within) * int64(i) / int64(a.N)))
			select {
			case <-ctx.Done():
			case <-time.After(time.Until(at)):
			}
			if ctx.Err() != nil {
				break
			}
			buyer(i)
		}
		// Let the schedule run out, so that every run has all its phases.
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(start.Add(a.Schedule.Total()))):
		}
	}
	wg.Wait()
	stopSampling()
	time.Sleep(sampleTimeout) // the last samples' answers

	rep := AdaptiveReport{Room: a.Room, Adaptive: a.Adaptive, Schedule: a.Schedule.String(), Target: a.TargetP95,
		Buyers: int(counts.entered.Load()), Served: int(counts.served.Load()), Failed: int(counts.failed.Load()),
		ShopFailed: int(counts.shopFailed.Load())}
	if !a.Adaptive {
		rep.Rate = a.Rate
	}
	counts.mu.Lock()
	rep.Elapsed = counts.last.Sub(start)
	rep.Errors = counts.errs.Counts()
	counts.mu.Unlock()
	rep.Seconds = mergeSeconds(smp.all(), shop.Record())
	rep.OrderP95 = shop.P95()
	if ctx.Err() != nil {
		return rep, fmt.Errorf("adaptive: the run did not end within %v", a.Timeout)
	}
	return rep, nil
}

func (a Adaptive) sourceIP(i int) net.IP { return net.IPv4(127, 0, 0, byte(2+a.FirstIP+i)) }

// buyer is one buyer from the line to the shop's page: enter, ready (SSE),
// pass, hand-off, GET /checkout, sending a "please retry" (503) again as
// the page's button would.
func (a Adaptive) buyer(ctx context.Context, rt http.RoundTripper, local net.IP, counts *adaptiveCounts) error {
	b := GateBuyer{RoomURL: strings.TrimRight(a.RoomURL, "/"), Room: a.Room, Client: NewGateClient(rt), Local: &net.TCPAddr{IP: local}}
	ready, err := func() (Ready, error) {
		defer counts.waiting.Add(-1)
		if _, err := b.Enter(ctx); err != nil {
			return Ready{}, err
		}
		return b.WaitReady(ctx)
	}()
	if err != nil {
		return err
	}
	var h HandOff
	var retries int
	err = retrying(ctx, &retries, func() (status int, err error) {
		h, status, err = b.takePass(ctx, ready.Token)
		if status == http.StatusServiceUnavailable && retries < maxRetries {
			return status, nil
		}
		return status, err
	})
	if err != nil {
		return err
	}
	res, err := PostHandOff(ctx, b.Client, h, a.RoomURL)
	if err != nil {
		return err
	}
	if res.Status != http.StatusSeeOther || res.Session == "" {
		return fmt.Errorf("gate buyer: hand-off answered %d", res.Status)
	}
	page, err := url.Parse(h.Action)
	if err != nil {
		return fmt.Errorf("gate buyer: hand-off action: %w", err)
	}
	next, err := page.Parse(res.Location)
	if err != nil {
		return fmt.Errorf("gate buyer: hand-off Location: %w", err)
	}
	var status int
	err = retrying(ctx, &retries, func() (int, error) {
		status, _, err = b.do(ctx, http.MethodGet, next.String(), nil, nil)
		return status, err
	})
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("%w: checkout answered %d", errShop, status)
	}
	return err
}

// sampleTimeout bounds one read of the server's metrics.
const sampleTimeout = 3 * time.Second

// roomSample is the room as the server's metrics showed it at one second.
type roomSample struct {
	Rate   float64
	Reason string
	// Admitted is cumulative; Read is false for a second whose metrics
	// could not be read in time.
	Admitted int64
	Waiting  int64
	Read     bool
}

// sampler reads the room's rate, its controller's decisions and its
// admissions from the server's metrics once a second, each read kept
// under the second it started in (a slow read leaves no gap after it).
type sampler struct {
	a     Adaptive
	start time.Time

	mu        sync.Mutex
	samples   []roomSample
	decisions map[string]float64
}

func (sm *sampler) sample(ctx context.Context) {
	i := int(time.Since(sm.start)/time.Second) - 1
	ctx, cancel := context.WithTimeout(ctx, sampleTimeout)
	defer cancel()
	s, decisions, err := sm.read(ctx)
	sm.mu.Lock()
	defer sm.mu.Unlock()
	for len(sm.samples) <= i {
		sm.samples = append(sm.samples, roomSample{})
	}
	if i < 0 || err != nil {
		return
	}
	for reason, n := range decisions {
		if n > sm.decisions[reason] && sm.decisions != nil {
			s.Reason = reason
		}
	}
	sm.decisions = decisions
	sm.samples[i] = s
}

func (sm *sampler) read(ctx context.Context) (roomSample, map[string]float64, error) {
	const decisionsName = "waitingroom_adaptive_decisions_total"
	m, err := ScrapeRoom(ctx, sm.a.MetricsURL, sm.a.Room, "reason", "waitingroom_adaptive_rate", "waitingroom_admitted_total",
		"waitingroom_waiting", decisionsName)
	if err != nil {
		return roomSample{}, nil, err
	}
	decisions := map[string]float64{}
	for k, v := range m {
		if reason, ok := strings.CutPrefix(k, decisionsName+"/"); ok {
			decisions[reason] = v
		}
	}
	s := roomSample{Rate: sm.a.Rate, Admitted: int64(m["waitingroom_admitted_total"]), Waiting: int64(m["waitingroom_waiting"]), Read: true}
	if sm.a.Adaptive {
		s.Rate = sm.a.startRate()
		if r, ok := m["waitingroom_adaptive_rate"]; ok {
			s.Rate = r
		}
	}
	return s, decisions, nil
}

// last returns the latest sample read.
func (sm *sampler) last() roomSample {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	for i := len(sm.samples) - 1; i >= 0; i-- {
		if sm.samples[i].Read {
			return sm.samples[i]
		}
	}
	return roomSample{}
}

// all returns the samples, a second not read holding the one before's
// rate.
func (sm *sampler) all() []roomSample {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	out := slices.Clone(sm.samples)
	for i := range out {
		if !out[i].Read && i > 0 {
			out[i].Rate, out[i].Admitted, out[i].Waiting, out[i].Reason = out[i-1].Rate, out[i-1].Admitted, out[i-1].Waiting, "unread"
		}
	}
	return out
}

// startRate is the adaptive room's rate before the controller's first
// decision: StartRate, or minRate (at least 1: a room's rate is positive).
func (a Adaptive) startRate() float64 {
	if a.StartRate > 0 {
		return a.StartRate
	}
	return max(a.MinRate, 1)
}

// mergeSeconds puts the room's samples (one a second from the start, the
// admitted count cumulative) beside the shop's record.
func mergeSeconds(samples []roomSample, shop []KneeSecond) []AdaptiveSecond {
	n := min(len(samples), len(shop))
	out := make([]AdaptiveSecond, n)
	var admitted int64
	for i := range n {
		s, k := samples[i], shop[i]
		out[i] = AdaptiveSecond{T: i, Rate: s.Rate, Reason: s.Reason, Waiting: s.Waiting, Served: k.Served, P95: k.P95,
			Rejected: k.Rejected, Capacity: k.Capacity}
		if s.Admitted >= admitted {
			out[i].Admitted, admitted = s.Admitted-admitted, s.Admitted
		}
	}
	return out
}

// P95 returns the p95 of every order served since the record started.
func (s *KneeShop) P95() time.Duration {
	s.mu.Lock()
	var all []time.Duration
	for _, sec := range s.secs {
		all = append(all, sec.took...)
	}
	s.mu.Unlock()
	slices.Sort(all)
	return durationPercentile(all, 95)
}
