package gate

import (
	"bufio"
	"context"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// The handlers' times: Protect times the answers of the handlers it
// wraps, for buyers with a live session, and reports them to waitingroom
// once a second (POST /api/rooms/{room}/gate/report, with the API key),
// where they feed the room's adaptive admission: the room admits buyers as
// fast as the shop answers them well. A report is a fixed-size summary,
// never a call per request:
//
//	{"ok": 1520, "failed": 3, "okMs": [12.5, 40.1, …], "failedMs": [30000, …]}
//
// ok and failed count the answers of the second (failed: status 5xx, or
// a handler that panicked before answering); okMs and failedMs are a
// uniform sample of at most reportSample of their durations, in
// milliseconds: the time to the answer's headers (a long download is the
// buyer's, not the shop's work). A report that fails is dropped, with a
// warning at most once a minute: it never slows the shop. Options.NoReport
// turns the reports off.

const (
	// reportEvery is how often the gate reports.
	reportEvery = time.Second
	// reportSample bounds the durations a report carries per outcome.
	reportSample = 128
	// reportIdle is how many empty periods stop the reporter; the next
	// answer starts it again.
	reportIdle = 10
)

// reportPath is the report's API path.
func reportPath(roomName string) string {
	return "/api/rooms/" + url.PathEscape(roomName) + "/gate/report"
}

// report is the body of a report.
type report struct {
	OK       int64     `json:"ok"`
	Failed   int64     `json:"failed"`
	OKMs     []float64 `json:"okMs,omitempty"`
	FailedMs []float64 `json:"failedMs,omitempty"`
}

// sampled counts one outcome's answers and keeps a uniform sample of
// their durations (reservoir sampling).
type sampled struct {
	n  int64
	ms []float64
}

func (s *sampled) add(ms float64) {
	s.n++
	if len(s.ms) < reportSample {
		s.ms = append(s.ms, ms)
		return
	}
	if j := rand.Int64N(s.n); j < reportSample {
		s.ms[j] = ms
	}
}

// reporter holds the answers since the last report.
type reporter struct {
	mu         sync.Mutex
	ok, failed sampled
	running    bool // a reportLoop runs
	every      time.Duration
	dropped    throttle // a report failed
}

// observe counts one answer of a wrapped handler, and starts the reporter
// when it is not running.
func (g *Gate) observe(took time.Duration, failed bool) {
	rp := g.reports
	ms := math.Round(took.Seconds()*1e4) / 10 // 0.1 ms: a short report
	rp.mu.Lock()
	if failed {
		rp.failed.add(ms)
	} else {
		rp.ok.add(ms)
	}
	start := !rp.running
	rp.running = true
	rp.mu.Unlock()
	if start {
		go g.reportLoop()
	}
}

// take returns the answers since the last call and forgets them; stop
// when there were none for reportIdle periods (the reporter then counts
// as stopped).
func (rp *reporter) take(idle int) (rep report, stop bool) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.ok.n == 0 && rp.failed.n == 0 {
		if idle >= reportIdle {
			rp.running = false
			return report{}, true
		}
		return report{}, false
	}
	rep = report{OK: rp.ok.n, Failed: rp.failed.n, OKMs: rp.ok.ms, FailedMs: rp.failed.ms}
	rp.ok, rp.failed = sampled{}, sampled{}
	return rep, false
}

// reportLoop sends a report every period with answers, until reportIdle
// periods had none.
func (g *Gate) reportLoop() {
	t := time.NewTicker(g.reports.every)
	defer t.Stop()
	idle := 0
	for range t.C {
		rep, stop := g.reports.take(idle)
		if stop {
			return
		}
		if rep.OK+rep.Failed == 0 {
			idle++
			continue
		}
		idle = 0
		g.sendReport(rep)
	}
}

// sendReport posts rep; a failure is dropped, and logged at most once a
// minute.
func (g *Gate) sendReport(rep report) {
	a, err := g.call(context.Background(), "report", http.MethodPost, reportPath(g.opts.Room), rep, true, slotTry)
	if err == nil && a.status < 300 {
		return
	}
	if g.reports.dropped.allow(g.now()) {
		if err != nil {
			g.log.Warn("gate: report of the handlers' times dropped", "err", err)
		} else {
			g.log.Warn("gate: report of the handlers' times refused", "status", a.status, "code", a.code)
		}
	}
}

// serveTimed serves next, timed, when the reports are on.
func (g *Gate) serveTimed(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if g.opts.NoReport {
		next.ServeHTTP(w, r)
		return
	}
	tw := &timedWriter{ResponseWriter: w, start: time.Now()}
	done := false
	defer func() {
		switch {
		case tw.status != 0:
			g.observe(tw.took, tw.status >= http.StatusInternalServerError)
		case done: // no write: net/http answers 200 now
			g.observe(time.Since(tw.start), false)
		default: // a panic before any answer: net/http answers 500 or drops the connection
			g.observe(time.Since(tw.start), true)
		}
	}()
	next.ServeHTTP(tw, r)
	done = true
}

// timedWriter notes the status and time of an answer's headers. It keeps
// Flush and Hijack, and everything http.ResponseController offers through
// Unwrap.
type timedWriter struct {
	http.ResponseWriter
	start  time.Time
	status int
	took   time.Duration
}

func (w *timedWriter) mark(status int) {
	if w.status == 0 && (status >= 200 || status == http.StatusSwitchingProtocols) {
		w.status, w.took = status, time.Since(w.start)
	}
}

func (w *timedWriter) WriteHeader(status int) {
	w.mark(status)
	w.ResponseWriter.WriteHeader(status)
}

func (w *timedWriter) Write(b []byte) (int, error) {
	w.mark(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// Flush sends what was written (http.Flusher).
func (w *timedWriter) Flush() {
	w.mark(http.StatusOK)
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack hands the connection to the handler (http.Hijacker).
func (w *timedWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.mark(http.StatusSwitchingProtocols)
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *timedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
