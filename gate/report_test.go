package gate

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// received sums the reports the fake room received.
func (f *fakeRoom) received() (rep report, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.reports {
		rep.OK += r.OK
		rep.Failed += r.Failed
		rep.OKMs = append(rep.OKMs, r.OKMs...)
		rep.FailedMs = append(rep.FailedMs, r.FailedMs...)
	}
	return rep, len(f.reports)
}

// TestReportsHandlersTimes: the protected handlers' answers to buyers
// with a session reach waitingroom in reports of a period (not a call
// per request): counted ok or failed (5xx, or a panic before any answer),
// each with its time to the headers; NoReport sends none.
func TestReportsHandlersTimes(t *testing.T) {
	const slow = 40 * time.Millisecond
	for _, tt := range []struct {
		name               string
		noReport           bool
		wantOK, wantFailed int64
	}{
		{"reported", false, 4, 2},
		{"NoReport", true, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(o *Options) { o.NoReport = tt.noReport })
			e.gate.reports.every = 200 * time.Millisecond
			mux := e.shop.Config.Handler.(*http.ServeMux)
			mux.Handle("/t/fail", e.gate.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "busy", http.StatusServiceUnavailable)
			})))
			mux.Handle("/t/panic", e.gate.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				panic(http.ErrAbortHandler)
			})))
			mux.Handle("/t/silent", e.gate.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
			mux.Handle("/t/slow", e.gate.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(slow)
				w.WriteHeader(http.StatusCreated)
				fmt.Fprint(w, "made")
			})))
			e.mustEnter()
			// A fresh connection per request: the client retries a GET whose
			// reused connection broke without an answer (the panic's), which
			// would count one answer twice.
			once := &http.Client{Jar: e.browser.Jar, CheckRedirect: e.browser.CheckRedirect,
				Transport: &http.Transport{DisableKeepAlives: true}}
			var wg sync.WaitGroup
			for _, p := range []string{"/", "/t/silent", "/t/slow", "/t/fail", "/t/panic", "/"} {
				wg.Go(func() {
					if resp, err := once.Get(e.shop.URL + p); err == nil {
						resp.Body.Close()
					}
				})
			}
			wg.Wait()
			e.browser.Jar = nil // no session: sent to the room, not counted
			if resp, err := e.browser.Get(e.shop.URL + "/"); err != nil || resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("without a session: %v %v", resp, err)
			}

			want := tt.wantOK + tt.wantFailed
			wait := 3 * time.Second
			if want == 0 {
				wait = 3 * e.gate.reports.every // a report would have come by then
			}
			deadline := time.Now().Add(wait)
			var rep report
			var reports int
			for {
				rep, reports = e.room.received()
				if (want > 0 && rep.OK+rep.Failed >= want) || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if rep.OK != tt.wantOK || rep.Failed != tt.wantFailed {
				t.Fatalf("reported %d ok, %d failed in %d reports; want %d, %d", rep.OK, rep.Failed, reports, tt.wantOK, tt.wantFailed)
			}
			if int64(len(rep.OKMs)) != rep.OK || int64(len(rep.FailedMs)) != rep.Failed {
				t.Fatalf("samples %v %v, want one per answer under the bound", rep.OKMs, rep.FailedMs)
			}
			if tt.wantOK > 0 && slices.Max(rep.OKMs) < float64(slow.Milliseconds()) {
				t.Fatalf("ok durations %v: the slow handler's %v is missing", rep.OKMs, slow)
			}
			if want > 0 && reports >= int(want) {
				t.Fatalf("%d reports for %d answers: a call per request", reports, want)
			}
		})
	}
}

// TestReportSampleIsBounded: a report counts every answer but carries a
// uniform sample of at most reportSample durations.
func TestReportSampleIsBounded(t *testing.T) {
	for _, tt := range []struct {
		answers int
		want    int
	}{{0, 0}, {1, 1}, {reportSample, reportSample}, {10_000, reportSample}} {
		var s sampled
		for i := range tt.answers {
			s.add(float64(i))
		}
		if s.n != int64(tt.answers) || len(s.ms) != tt.want {
			t.Fatalf("%d answers: counted %d, sampled %d; want %d", tt.answers, s.n, len(s.ms), tt.want)
		}
		if tt.answers == 10_000 {
			var sum float64
			for _, v := range s.ms {
				sum += v
			}
			// The mean of a uniform sample of 0..9999: 5000, give or take
			// 255 (one standard deviation); a sample of the first
			// answers only would be about 64.
			if mean := sum / float64(len(s.ms)); mean < 3500 || mean > 6500 {
				t.Fatalf("sample mean %.0f: not uniform over the period", mean)
			}
		}
	}
}
