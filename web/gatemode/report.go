package gatemode

import (
	"fmt"
	"math"
	"net/http"
	"time"

	"waitingroom/server/room"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

// The gate middleware's report of the shop's answers (package gate,
// report.go): once a second, a shop instance posts how many answers its
// protected handlers gave, ok (status < 500) and failed, with a uniform
// sample of their durations in milliseconds. They feed the room's
// adaptive signal (Deps.Signal) as the reverse proxy's do; a room that
// is not adaptive costs nothing more (the Recorder drops them).

// gateReport is the body of POST /api/rooms/{room}/gate/report.
type gateReport struct {
	OK       int64     `json:"ok"`
	Failed   int64     `json:"failed"`
	OKMs     []float64 `json:"okMs"`
	FailedMs []float64 `json:"failedMs"`
}

const (
	// reportCountMax bounds the answers one report counts, per outcome.
	reportCountMax = 1_000_000
	// reportSampleMax bounds the durations one report carries, per
	// outcome.
	reportSampleMax = 256
	// reportMsMax is the longest duration a report may carry (10 min).
	reportMsMax = 600_000
	// ReportsPerRoom and ReportsBurst bound the reports of a room's shop
	// instances, across them all, on this instance.
	ReportsPerRoom = 20
	ReportsBurst   = 40
)

// checkOutcome checks one outcome's count and sample.
func checkOutcome(field string, n int64, ms []float64) error {
	switch {
	case n < 0 || n > reportCountMax:
		return fmt.Errorf("%q must count 0 to %d answers", field, reportCountMax)
	case len(ms) > reportSampleMax:
		return fmt.Errorf("%q must carry at most %d durations", field+"Ms", reportSampleMax)
	case int64(len(ms)) > n:
		return fmt.Errorf("%q carries more durations than %q counts answers", field+"Ms", field)
	case n > 0 && len(ms) == 0:
		return fmt.Errorf("%q needs a sample of the durations of the %q answers", field+"Ms", field)
	}
	for _, d := range ms {
		if !(d >= 0 && d <= reportMsMax) {
			return fmt.Errorf("%q: durations are milliseconds from 0 to %d", field+"Ms", reportMsMax)
		}
	}
	return nil
}

// check validates a report.
func (g gateReport) check() error {
	if err := checkOutcome("ok", g.OK, g.OKMs); err != nil {
		return err
	}
	return checkOutcome("failed", g.Failed, g.FailedMs)
}

// feed tells sig of the report's answers in room: each sampled duration
// stands for an equal share of its outcome's count.
func (g gateReport) feed(sig ShopSignal, roomName string) {
	spread := func(reason string, n int64, ms []float64) {
		if len(ms) == 0 {
			return
		}
		each, rest := n/int64(len(ms)), n%int64(len(ms))
		for i, d := range ms {
			w := each
			if int64(i) < rest {
				w++
			}
			sig.ObserveOrders(roomName, reason, time.Duration(math.Round(d*float64(time.Millisecond))), w)
		}
	}
	spread(ShopAnswered, g.OK, g.OKMs)
	spread(ShopUnavailable, g.Failed, g.FailedMs)
}

// Report serves POST /api/rooms/{room}/gate/report (the room's API
// key): 204, or 400 bad_report naming what is wrong, 429 past the room's
// rate of reports.
func (gt *Gate) Report(w http.ResponseWriter, r *http.Request, _ room.Settings) {
	name := r.PathValue("room")
	if !gt.d.AllowReport(name) {
		w.Header().Set("Retry-After", "1")
		response.WriteError(w, http.StatusTooManyRequests, "too_many_reports", "Too many reports for this room: one a second per shop instance is enough.")
		return
	}
	var rep gateReport
	if !request.DecodeStrict(w, r, &rep, `{"ok":n,"failed":n,"okMs":[ms,…],"failedMs":[ms,…]}`) {
		return
	}
	if err := rep.check(); err != nil {
		response.WriteError(w, http.StatusBadRequest, "bad_report", "Bad report: "+err.Error()+".")
		return
	}
	if gt.d.Signal != nil {
		rep.feed(gt.d.Signal, name)
	}
	w.WriteHeader(http.StatusNoContent)
}
