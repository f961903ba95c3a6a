package k6

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/r3labs/sse/v2"
	"gopkg.in/cenkalti/backoff.v1"
)

// Soak holds N waiting visitors on a room for a while, over SSE or, in
// polling mode, as the seed's clients did, and measures what it costs.
type Soak struct {
	// BaseURL is the server, for example http://127.0.0.1:8080, or a
	// comma-separated list of servers: visitor i connects to server i mod
	// their number, and the server-side figures are summed over them.
	BaseURL string
	// MetricsURL is the server's private Prometheus endpoint (default:
	// DefaultMetricsURL), or a list of one per server, in BaseURL's order.
	MetricsURL string
	Room       string
	N          int
	// Ramp is the number of new connections per second.
	Ramp float64
	// Hold is how long all connections are held once they are up.
	Hold time.Duration
	// SourceIPs spreads connections over 127.0.0.(FirstIP+1) onwards.
	SourceIPs int
	// FirstIP offsets the source addresses (for child processes).
	FirstIP int
	// Poll selects the seed's polling pattern instead of SSE.
	Poll bool
	// Settle is how long to wait after the ramp before measuring.
	Settle time.Duration
	// Linger keeps the connections open, unmeasured, this long after the
	// hold and its readings: a many-process run's parent reads the
	// servers' memory meanwhile, after the children's hold.
	Linger time.Duration
	// R3labs follows the streams with the r3labs/sse client instead of the
	// lean raw client.
	R3labs bool
	// GCURL, when set, is fetched before the server figures are read at
	// the start (until the RSS settles: see SettleMemory) and at the end
	// (a server's DEBUG_ADDR /debug/pprof/heap?gc=1 runs a garbage
	// collection), so that the memory figures count live memory, not the
	// start-up's or the ramp's garbage. With several servers, a list of
	// one per server.
	GCURL string
	// FirstVisitor is the index of the soak's first visitor among all the
	// processes' (for child processes): visitor i connects to server
	// (FirstVisitor+i) mod the number of servers.
	FirstVisitor int
	// Tick is the server's tick period (default 1 s): for a server that
	// does not count its ticks (the r3labs reference), the hold's ticks,
	// for the writes per tick, are its seconds over Tick.
	Tick time.Duration
	// Unclassed counts every timed event in the class "all" only: for a
	// server whose events carry no priority class (the r3labs reference,
	// whose events are named position too). Widget viewers' events are
	// never classed.
	Unclassed bool
	// Widget holds embedded-widget viewers (/r/{room}/widget/events, no
	// ticket) instead of waiting visitors; raw client only.
	Widget bool
	// RedisCalls, when set, reads the Redis server's total command calls
	// (INFO commandstats, including commands run inside scripts), at the
	// start and the end of the hold.
	RedisCalls func(ctx context.Context) (int64, error)
	// Progress, when set, receives a progress line every ProgressEvery
	// (DefaultProgressEvery when zero) while the soak runs.
	Progress      io.Writer
	ProgressEvery time.Duration
}

// Report is what a soak measured.
type Report struct {
	Mode string
	// Visitors is how many visitors the soak set out to hold.
	Visitors       int64
	Connected      int64
	Failed         int64
	Reconnects     int64
	ConnectSeconds float64
	HeadersP50     time.Duration
	HeadersP99     time.Duration
	Events         int64
	// Lost counts the TICKs a stream heard nothing beyond its cadence:
	// after an event that said "every":N, N TICKs and one more are on
	// schedule (see missed). Duplicates counts the ids a stream saw again.
	Lost int64
	// LostHold is the part of Lost that fell in the measured hold, after
	// the ramp (which loads the machine with handshakes).
	LostHold     int64
	Duplicates   int64
	LatencyP50   time.Duration
	LatencyP99   time.Duration
	LatencyMax   time.Duration
	WorstTickP99 time.Duration
	Ticks        int
	// RSSBefore is the server's RSS just before the soak connected, and
	// RSSAfter at the end of the hold; RSSPerConn is their difference over
	// the soak's own connections (0 when the RSS fell).
	RSSBefore  float64
	RSSAfter   float64
	RSSPerConn float64
	// HeapBefore and HeapAfter are the server's Go heap in use at the same
	// moments (0 when it does not export it); HeapPerConn is their
	// difference over the soak's own connections. Unlike the RSS, it does
	// not hide connections in memory the runtime already held.
	HeapBefore, HeapAfter, HeapPerConn float64
	// ServerConns is how many SSE connections the server gained between
	// just before the soak connected and the start of the hold (never
	// below 0); ServerConnsBefore is what it had before. ServerConnsKnown
	// is false for a server that does not export the count (the r3labs
	// reference).
	ServerConns       float64
	ServerConnsBefore float64
	ServerConnsKnown  bool
	CommandsPerSec    float64
	HoldSeconds       float64
	Polls             int64
	PollsPerSecond    float64
	// PollAnswers and PollErrors count every poll of the run, the ramp's
	// included; an error is a transport error or a status other than 200.
	PollAnswers, PollErrors int64
	// RedisSidePerSec is the Redis server's command calls per second over
	// the hold, scripts' inner commands included (when RedisCalls is set).
	RedisSidePerSec float64
	// Lat holds the raw latencies (µs) by tick, so that reports of several
	// processes merge into exact percentiles: every timed event that has
	// a tick id (not ready events). LatencyP50, LatencyP99, LatencyMax and
	// WorstTickP99 are Lat's.
	Lat map[int64][]int32 `json:"lat,omitempty"`
	// Classes holds the raw latencies (µs) of the classed events by
	// priority class (ClassReady, ClassFront, ClassBack).
	Classes map[string][]int32 `json:"classes,omitempty"`
	// Delays are the percentiles by priority class, ClassAll first (Lat's
	// events and the ready events).
	Delays []ClassDelay `json:"delays,omitempty"`
	// TickSeconds is the server's tick period, in seconds.
	TickSeconds float64
	// EventsWritten is how many SSE events the servers wrote during the
	// hold, and WritesPerTick the same per tick of the hold (EventsKnown:
	// the servers export the count).
	EventsWritten, WritesPerTick float64
	EventsKnown                  bool
	// HoldTicks is how many ticks the hold saw: the servers' issuer ticks
	// when HoldTicksCounted, else its seconds over TickSeconds (see
	// serverCosts).
	HoldTicks        float64
	HoldTicksCounted bool
	// CPUSeconds is the servers' CPU over the hold, CPUPercent the same in
	// % of one core, and CPUPerVisitor the CPU seconds per waiting visitor
	// (the soak's own streams) per second (CPUKnown: the servers export
	// process_cpu_seconds_total).
	CPUSeconds, CPUPercent, CPUPerVisitor float64
	CPUKnown                              bool
	// Servers is each server's share, when the soak held visitors on more
	// than one.
	Servers []ServerShare `json:"servers,omitempty"`
	// Headers holds the raw times to headers (µs).
	Headers []int32 `json:"headers,omitempty"`
	// Warnings say which server-side figures cannot be trusted, and why.
	Warnings []string `json:"warnings,omitempty"`
}

// The server's metrics a soak reads.
const (
	metricRSS      = "process_resident_memory_bytes"
	metricCommands = "waitingroom_redis_commands_total"
	metricSSE      = "waitingroom_sse_connections"
	metricHeap     = "go_memstats_heap_inuse_bytes"
)

// ScrapeSoak reads the server figures a soak needs from a /metrics URL.
func ScrapeSoak(ctx context.Context, url string) (map[string]float64, error) {
	return Scrape(ctx, url, metricRSS, metricCommands, metricSSE, metricHeap, metricEvents, metricTicks, metricCPU)
}

// ServerFigures sets the server-side figures from three scrapes: before,
// taken just before the soak connects; mid, at the start of the hold; and
// after, at its end. With several servers, each map is their sum.
func (r *Report) ServerFigures(before, mid, after map[string]float64, holdSeconds float64) {
	r.HoldSeconds = holdSeconds
	r.RSSBefore, r.RSSAfter = before[metricRSS], after[metricRSS]
	r.HeapBefore, r.HeapAfter = before[metricHeap], after[metricHeap]
	_, r.ServerConnsKnown = mid[metricSSE]
	r.ServerConnsBefore = before[metricSSE]
	r.ServerConns = max(0, mid[metricSSE]-before[metricSSE])
	if holdSeconds > 0 {
		r.CommandsPerSec = (after[metricCommands] - mid[metricCommands]) / holdSeconds
	}
	r.serverCosts(mid, after)
}

// roughBelow is the number of connections under which the server's RSS
// delta is mostly its own noise (GC, heap growth), not the connections.
const roughBelow = 1000

// perConnection divides the server's RSS delta by the soak's own
// connections, never by the server's count (which includes every other
// client), and warns where the server's figures disagree with the soak's.
func (r *Report) perConnection() {
	r.RSSPerConn, r.Warnings = 0, nil
	r.perVisitorCost()
	if r.Connected <= 0 {
		return
	}
	own := float64(r.Connected)
	r.HeapPerConn = 0
	if r.HeapBefore > 0 && r.HeapAfter > r.HeapBefore {
		r.HeapPerConn = (r.HeapAfter - r.HeapBefore) / own
	}
	delta := r.RSSAfter - r.RSSBefore
	switch {
	case delta <= 0:
		r.Warnings = append(r.Warnings, fmt.Sprintf("the server's RSS fell during the soak (%.1f -> %.1f MiB): it returned more memory "+
			"than %d connections cost, so there is no per-connection figure; measure with -n %d or more",
			r.RSSBefore/(1<<20), r.RSSAfter/(1<<20), r.Connected, roughBelow))
	default:
		r.RSSPerConn = delta / own
		if r.Connected < roughBelow {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%d connections move the server's RSS less than its own noise does: "+
				"the per-connection figure is rough; measure with -n %d or more", r.Connected, roughBelow))
		}
	}
	if r.streams() && r.ServerConnsKnown {
		if diff := r.ServerConns - own; diff > max(2, 0.02*own) || -diff > max(2, 0.02*own) {
			r.Warnings = append(r.Warnings, fmt.Sprintf("the server's SSE connections went from %.0f to %.0f during the soak, "+
				"but the soak opened %d: other clients came or went meanwhile, or some of the soak's were refused; "+
				"the per-connection figures count the soak's own %d", r.ServerConnsBefore, r.ServerConnsBefore+r.ServerConns,
				r.Connected, r.Connected))
		}
	}
}

// Validate returns an error for a soak that is unbounded or aims anywhere
// but loopback (any of its servers' URLs).
func (s Soak) Validate() error {
	servers, err := s.Servers()
	if err != nil {
		return err
	}
	for i, srv := range servers {
		if err := srv.validate(i); err != nil {
			return err
		}
	}
	switch {
	case s.N < 1 || s.N > 19000:
		return fmt.Errorf("soak: n %d out of 1..19000 (one process's open files)", s.N)
	case s.Ramp <= 0:
		return errors.New("soak: ramp must be positive")
	case s.Hold <= 0 || s.Hold > 30*time.Minute:
		return fmt.Errorf("soak: hold %v out of (0, 30m]", s.Hold)
	case s.SourceIPs < 1 || s.FirstIP+s.SourceIPs > 250:
		return fmt.Errorf("soak: source IPs %d out of 1..250", s.SourceIPs)
	case s.Widget && (s.Poll || s.R3labs):
		return errors.New("soak: widget viewers use the raw SSE client only")
	case s.FirstVisitor < 0 || s.Tick < 0:
		return errors.New("soak: first visitor and tick must not be negative")
	}
	return nil
}

// Servers is the soak's servers: BaseURL, MetricsURL and GCURL paired.
func (s Soak) Servers() ([]SoakServer, error) {
	return ParseSoakServers(s.BaseURL, s.MetricsURL, s.GCURL)
}

// tick is Tick, or 1 s.
func (s Soak) tick() time.Duration {
	if s.Tick > 0 {
		return s.Tick
	}
	return time.Second
}

// CollectGarbage runs a garbage collection on each server through its GC
// URL, if set.
func CollectGarbage(ctx context.Context, servers []SoakServer) error {
	for _, srv := range servers {
		if err := collectOne(ctx, srv.GCURL); err != nil {
			return err
		}
	}
	return nil
}

func collectOne(ctx context.Context, gcURL string) error {
	if gcURL == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, gcURL, nil)
	if err != nil {
		return fmt.Errorf("soak: gc url: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("soak: gc url: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("soak: gc url %s: %s", gcURL, resp.Status)
	}
	return nil
}

// DefaultMetricsURL is where a server with the default METRICS_ADDR serves
// /metrics; the public port never does.
const DefaultMetricsURL = "http://127.0.0.1:9090/metrics"

// soakCounts are a running soak's counters, shared by its clients.
type soakCounts struct {
	connected, failed, reconnects, events, lost, lostHold, dups atomic.Int64
	// polls counts the polls of the hold; pollAnswers and pollErrors those
	// of the whole run.
	polls, pollAnswers, pollErrors atomic.Int64
	measuring                      atomic.Bool

	mu      sync.Mutex
	headers []time.Duration
}

// connectedIn counts a stream that got its headers after took.
func (c *soakCounts) connectedIn(took time.Duration) {
	c.connected.Add(1)
	c.mu.Lock()
	c.headers = append(c.headers, took)
	c.mu.Unlock()
}

// Run performs the soak. It returns when the hold is over or ctx ends.
func (s Soak) Run(ctx context.Context) (Report, error) {
	if err := s.Validate(); err != nil {
		return Report{}, err
	}
	servers, err := s.Servers()
	if err != nil {
		return Report{}, err
	}
	rep := Report{Mode: "sse", TickSeconds: s.tick().Seconds()}
	switch {
	case s.Poll:
		rep.Mode = "poll"
	case s.Widget:
		rep.Mode = "widget"
	}
	classed := !s.Unclassed && !s.Widget

	clients := make([]*http.Client, s.SourceIPs)
	for i := range clients {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+s.FirstIP+i))}
		d := &net.Dialer{LocalAddr: local, Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
		clients[i] = &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 2000, DisableCompression: true}}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	var c soakCounts
	shards := newShards(64)
	var wg sync.WaitGroup
	// The baseline, just before connecting: what the server holds for
	// others is not the soak's.
	if err := SettleMemory(ctx, servers); err != nil {
		return rep, err
	}
	before, err := ScrapeSoakAll(ctx, servers)
	if err != nil {
		return rep, err
	}
	start := time.Now()
	var phase atomic.Pointer[string]
	setPhase := func(p string) { phase.Store(&p) }
	setPhase("ramping up")
	if s.Progress != nil {
		stop := every(s.ProgressEvery, func() {
			fmt.Fprintf(s.Progress, "soak %s, %.0f s: %d of %d connected, %d failed, %d reconnects, %d events, %d polls\n",
				*phase.Load(), time.Since(start).Seconds(), c.connected.Load(), s.N, c.failed.Load(), c.reconnects.Load(), c.events.Load(), c.pollAnswers.Load())
		})
		defer stop()
	}
	interval := time.Duration(float64(time.Second) / s.Ramp)
	for i := 0; i < s.N && runCtx.Err() == nil; i++ {
		jar, _ := cookiejar.New(nil)
		hc := *clients[i%len(clients)]
		hc.Jar = jar
		sh := &shards[i%len(shards)]
		base := servers[(s.FirstVisitor+i)%len(servers)].URL
		switch {
		case s.Poll:
			wg.Go(func() { s.poller(runCtx, &hc, base, &c) })
		case !s.R3labs:
			rs, err := newRawStream(base, s.Room, &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+s.FirstIP+i%s.SourceIPs))})
			if err != nil {
				return rep, err
			}
			if s.Widget {
				rs.path = "/r/" + url.PathEscape(s.Room) + "/widget/events"
			}
			wg.Go(func() {
				tr := tracker{sh: sh, c: &c, classed: classed, tick: s.tick()}
				rs.run(runCtx, func(first bool, took time.Duration, err error) {
					switch {
					case err != nil:
						c.failed.Add(1)
					case first:
						c.connectedIn(took)
					default:
						c.reconnects.Add(1)
					}
				}, tr.event)
			})
		default:
			wg.Go(func() {
				s.follower(runCtx, &hc, base, tracker{sh: sh, c: &c, classed: classed, tick: s.tick()})
			})
		}
		if d := time.Until(start.Add(time.Duration(i+1) * interval)); d > 0 {
			select {
			case <-runCtx.Done():
			case <-time.After(d):
			}
		}
	}
	for c.connected.Load()+c.failed.Load() < int64(s.N) && runCtx.Err() == nil && time.Since(start) < time.Duration(float64(s.N)/s.Ramp*float64(time.Second))+30*time.Second {
		time.Sleep(50 * time.Millisecond)
	}
	rep.ConnectSeconds = time.Since(start).Seconds()
	setPhase("settling")
	select {
	case <-runCtx.Done():
	case <-time.After(s.Settle):
	}

	// Measure over the hold.
	mid, err := ScrapeSoakAll(ctx, servers)
	if err != nil {
		return rep, err
	}
	var callsBefore int64
	if s.RedisCalls != nil {
		if callsBefore, err = s.RedisCalls(ctx); err != nil {
			return rep, err
		}
	}
	c.measuring.Store(true)
	setPhase("holding")
	holdStart := time.Now()
	select {
	case <-runCtx.Done():
	case <-time.After(s.Hold):
	}
	c.measuring.Store(false)
	held := time.Since(holdStart).Seconds()
	if s.RedisCalls != nil {
		callsAfter, err := s.RedisCalls(ctx)
		if err != nil {
			return rep, err
		}
		rep.RedisSidePerSec = float64(callsAfter-callsBefore) / held
	}
	after, err := ScrapeSoakEnd(ctx, servers)
	if err != nil {
		return rep, err
	}
	if s.Linger > 0 {
		setPhase("lingering")
		select {
		case <-runCtx.Done():
		case <-time.After(s.Linger):
		}
	}
	cancel()
	wg.Wait()

	rep.Visitors = int64(s.N)
	rep.Connected, rep.Failed, rep.Reconnects = c.connected.Load(), c.failed.Load(), c.reconnects.Load()
	rep.Events, rep.Lost, rep.Duplicates, rep.Polls = c.events.Load(), c.lost.Load(), c.dups.Load(), c.polls.Load()
	rep.LostHold = c.lostHold.Load()
	rep.PollAnswers, rep.PollErrors = c.pollAnswers.Load(), c.pollErrors.Load()
	rep.ServersFigures(servers, before, mid, after, held)
	rep.PollsPerSecond = float64(rep.Polls) / rep.HoldSeconds
	rep.perConnection()

	rep.Lat, rep.Classes = map[int64][]int32{}, map[string][]int32{}
	for i := range shards {
		for tick, ls := range shards[i].byTick {
			for _, l := range ls {
				rep.Lat[tick] = append(rep.Lat[tick], micros(l))
			}
		}
		for class, ls := range shards[i].byClass {
			for _, l := range ls {
				rep.Classes[class] = append(rep.Classes[class], micros(l))
			}
		}
	}
	for _, h := range c.headers {
		rep.Headers = append(rep.Headers, micros(h))
	}
	rep.latencyStats()
	return rep, nil
}

// latencyStats computes the latency percentiles from the raw samples.
func (r *Report) latencyStats() {
	var all []time.Duration
	r.WorstTickP99 = 0
	for _, ls := range r.Lat {
		tick := make([]time.Duration, len(ls))
		for i, l := range ls {
			tick[i] = time.Duration(l) * time.Microsecond
		}
		all = append(all, tick...)
		slices.Sort(tick)
		r.WorstTickP99 = max(r.WorstTickP99, Percentile(tick, 99))
	}
	r.Ticks = len(r.Lat)
	slices.Sort(all)
	r.LatencyP50, r.LatencyP99 = Percentile(all, 50), Percentile(all, 99)
	if len(all) > 0 {
		r.LatencyMax = all[len(all)-1]
	}
	hs := make([]time.Duration, len(r.Headers))
	for i, h := range r.Headers {
		hs[i] = time.Duration(h) * time.Microsecond
	}
	slices.Sort(hs)
	r.HeadersP50, r.HeadersP99 = Percentile(hs, 50), Percentile(hs, 99)
	r.Delays = classDelays(r.Lat, r.Classes)
}

// MergeReports folds the client-side figures of child processes into
// server, whose server-side figures (RSS, commands, writes, CPU) the
// parent measured itself.
func MergeReports(server Report, children []Report) Report {
	out := server
	out.Lat, out.Classes = map[int64][]int32{}, map[string][]int32{}
	out.Headers = nil
	out.Connected, out.Failed, out.Reconnects, out.Events, out.Lost, out.Duplicates, out.Polls = 0, 0, 0, 0, 0, 0, 0
	out.LostHold = 0
	out.Visitors, out.PollAnswers, out.PollErrors, out.PollsPerSecond = 0, 0, 0, 0
	for _, c := range children {
		out.Visitors += c.Visitors
		out.PollAnswers += c.PollAnswers
		out.PollErrors += c.PollErrors
		out.Connected += c.Connected
		out.Failed += c.Failed
		out.Reconnects += c.Reconnects
		out.Events += c.Events
		out.Lost += c.Lost
		out.LostHold += c.LostHold
		out.Duplicates += c.Duplicates
		out.Polls += c.Polls
		out.PollsPerSecond += c.PollsPerSecond
		out.ConnectSeconds = max(out.ConnectSeconds, c.ConnectSeconds)
		out.Mode = c.Mode
		for t, ls := range c.Lat {
			out.Lat[t] = append(out.Lat[t], ls...)
		}
		for class, ls := range c.Classes {
			out.Classes[class] = append(out.Classes[class], ls...)
		}
		out.Headers = append(out.Headers, c.Headers...)
	}
	out.perConnection()
	out.latencyStats()
	return out
}

// follower follows one stream of base with the r3labs/sse client.
func (s Soak) follower(ctx context.Context, hc *http.Client, base string, tr tracker) {
	counts := tr.c
	u := strings.TrimRight(base, "/") + "/r/" + url.PathEscape(s.Room) + "/events"
	c := sse.NewClient(u, sse.ClientMaxBufferSize(8<<10))
	c.Connection = hc
	c.ReconnectStrategy = backoff.WithContext(backoff.NewConstantBackOff(time.Second+rand.N(time.Second)), ctx)
	began := time.Now()
	first := true
	c.ResponseValidator = func(_ *sse.Client, resp *http.Response) error {
		if resp.StatusCode != http.StatusOK {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		if first {
			first = false
			counts.connectedIn(time.Since(began))
		} else {
			counts.reconnects.Add(1)
		}
		return nil
	}
	err := c.SubscribeRawWithContext(ctx, func(e *sse.Event) {
		if len(e.Data) == 0 {
			return
		}
		id, _ := strconv.ParseInt(string(e.ID), 10, 64)
		tr.event(id, e.Event, e.Data)
	})
	if first && err != nil && ctx.Err() == nil {
		counts.failed.Add(1)
	}
}

// poller is one client of the seed's design: enter, then poll the position
// at the interval the server asks for.
func (s Soak) poller(ctx context.Context, hc *http.Client, base string, counts *soakCounts) {
	api := strings.TrimRight(base, "/") + "/api/rooms/" + url.PathEscape(s.Room) + "/queue"
	call := func(method, u string) (int64, error) {
		req, err := http.NewRequestWithContext(ctx, method, u, nil)
		if err != nil {
			return 0, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if err != nil || resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("%s %s: %d %v", method, u, resp.StatusCode, err)
		}
		return jsonInt(body, `"pollingIntervalSeconds":`), nil
	}
	interval, err := call(http.MethodPost, api)
	if err != nil {
		if ctx.Err() == nil {
			counts.failed.Add(1)
		}
		return
	}
	counts.connected.Add(1)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(max(interval, 1))*time.Second + rand.N(500*time.Millisecond)):
		}
		n, err := call(http.MethodGet, api+"/position")
		switch {
		case ctx.Err() != nil:
			return // the end of the run, not the server's answer
		case err != nil:
			counts.pollErrors.Add(1)
		default:
			interval = n
			counts.pollAnswers.Add(1)
			if counts.measuring.Load() {
				counts.polls.Add(1)
			}
		}
	}
}

// jsonInt reads the integer after key in a flat JSON object.
func jsonInt(b []byte, key string) int64 {
	s := string(b)
	i := strings.Index(s, key)
	if i < 0 {
		return 0
	}
	s = s[i+len(key):]
	end := strings.IndexAny(s, ",}")
	if end < 0 {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(s[:end]), 10, 64)
	return n
}

// Check returns an error when more than max of the soak's answers were
// not a 200: visitors that never connected (refused, failed, or not
// connected in time) and, when polling, polls that failed.
func (r Report) Check(max float64) error {
	unexpected := r.Visitors - r.Connected + r.PollErrors
	total := r.Visitors + r.PollAnswers + r.PollErrors
	detail := fmt.Sprintf("expected 200; %d of %d visitors never connected (%d refused or failed)", r.Visitors-r.Connected, r.Visitors, r.Failed)
	if r.Mode == "poll" {
		detail += fmt.Sprintf(", %d of %d polls failed", r.PollErrors, r.PollAnswers+r.PollErrors)
	}
	return CheckShare("soak", int(unexpected), int(total), max, detail)
}

// String formats the report as the tables in BENCHMARKS.md quote it.
// streams reports whether the soak held SSE streams (visitors' or
// widgets'), not polls.
func (r Report) streams() bool { return r.Mode == "sse" || r.Mode == "widget" }

func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mode %s: %d connected, %d failed, %d reconnects in %.1f s (time to headers p50 %v, p99 %v)\n",
		r.Mode, r.Connected, r.Failed, r.Reconnects, r.ConnectSeconds, r.HeadersP50.Round(time.Microsecond), r.HeadersP99.Round(time.Microsecond))
	if r.streams() {
		fmt.Fprintf(&b, "events %d over %d ticks measured; lost %d (%d in the hold), duplicates %d (lost: TICKs of silence beyond the last event's \"every\" and one more)\n",
			r.Events, r.Ticks, r.Lost, r.LostHold, r.Duplicates)
		fmt.Fprintf(&b, "broadcast latency, tick -> client: p50 %v, p99 %v, max %v; worst tick p99 %v\n",
			r.LatencyP50.Round(time.Microsecond), r.LatencyP99.Round(time.Microsecond), r.LatencyMax.Round(time.Microsecond), r.WorstTickP99.Round(time.Microsecond))
		r.delayLines(&b)
	} else {
		fmt.Fprintf(&b, "polls %.0f/s over the hold\n", r.PollsPerSecond)
	}
	perConn := "no per-connection figure"
	if r.RSSPerConn > 0 {
		perConn = fmt.Sprintf("%.2f KiB per connection", r.RSSPerConn/1024)
	}
	servers := ""
	if len(r.Servers) > 1 {
		servers = fmt.Sprintf(" (summed over %d servers)", len(r.Servers))
	}
	fmt.Fprintf(&b, "server RSS%s %.1f MiB -> %.1f MiB: %s, over the soak's own %d connections\n",
		servers, r.RSSBefore/(1<<20), r.RSSAfter/(1<<20), perConn, r.Connected)
	if r.HeapBefore > 0 {
		fmt.Fprintf(&b, "server Go heap in use %.1f MiB -> %.1f MiB: %.2f KiB per connection\n",
			r.HeapBefore/(1<<20), r.HeapAfter/(1<<20), r.HeapPerConn/1024)
	}
	if r.streams() && r.ServerConnsKnown {
		fmt.Fprintf(&b, "SSE connections the server gained during the soak: %.0f (it had %.0f before)\n", r.ServerConns, r.ServerConnsBefore)
	}
	fmt.Fprintf(&b, "Redis commands sent by the server: %.1f/s over %.1f s\n", r.CommandsPerSec, r.HoldSeconds)
	if r.RedisSidePerSec > 0 {
		fmt.Fprintf(&b, "Redis-side calls (INFO commandstats, scripts' inner commands included): %.1f/s over the hold\n", r.RedisSidePerSec)
	}
	r.costLines(&b)
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "WARNING: %s\n", w)
	}
	return b.String()
}
