package views

import (
	"math"
	"strconv"
	"time"
)

// DashboardPage is the console's page of one room: its live figures as
// they were at load, refreshed by console-live.js from LiveURL.
type DashboardPage struct {
	Page ConsolePage
	Room string
	T    DashText
	Live DashboardLive
	// LiveURL is the room's SSE stream of fragments.
	LiveURL string
	// SettingsURL is the room's settings and actions page.
	SettingsURL string
	// CSS and JS are the fingerprinted dashboard stylesheet and script.
	CSS, JS string
}

// DashboardLive is one second of a room: the fragment in #dash-live.
type DashboardLive struct {
	At time.Time
	// Loc is the operator's time zone (UTC when nil): the times are shown
	// in it, with its offset.
	Loc *time.Location
	// Phase is the room's schedule phase at At: queue.PhaseScheduled,
	// PhasePrequeue, PhaseOpen or PhaseClosed.
	Phase   string
	Paused  bool
	SoldOut bool
	// Waiting, Prequeued and Active are the line as it is now.
	Waiting, Prequeued, Active int64
	// Gate is set in a room that sends buyers on to a shop: Sessions are
	// its live sessions there, and the room's totals opened, ended by the
	// shop and gone idle.
	Gate                                          bool
	Sessions, SessionsOpened, SessionsEnded, Idle int64
	// AdmitSet is the room's rate; AdmitMeasured the admissions per
	// second over the last seconds.
	AdmitSet, AdmitMeasured float64
	// ETA is the wait of the last in line, in seconds; nil when there is
	// no honest estimate (paused, nothing admitted).
	ETA *int64
	// OrdersPerSec is orders placed per second over the last seconds.
	OrdersPerSec float64
	// Placed counts the room's placed orders; Sold their units, Left the
	// stock left.
	Placed, Sold, Left int64
	// P50 and P95 are the order latency of the last seconds with orders,
	// in milliseconds; NaN when there were none.
	P50, P95 float64
	// Failures are the refused orders of the last ten minutes by reason.
	Failures Failures
	// Instances are the server instances with their SSE connections.
	Instances []InstanceRow
	Charts    []Chart
	// Timeline is the sale's events, newest first.
	Timeline []TimelineItem
	// IssuerFailed counts the issuers' failed ticks and draws of the room
	// in the last ten minutes; IssuerFailedAt is the last one's second.
	IssuerFailed   int64
	IssuerFailedAt time.Time
	// Unavailable: some figures could not be read this second.
	Unavailable bool
	// Missing are the figures that could not be read this second, by
	// name (FigLine, FigSeries, FigStock, FigTimeline), each with the time
	// of its last good reading (zero when none): they show "—", never 0.
	Missing map[string]time.Time
	// Networks: the room's pre-queue has recorded joins by client network;
	// Flagged are the networks with FlagJoins joins or more, most first.
	Networks  bool
	Flagged   []NetworkRow
	FlagJoins int64
	// Adaptive is the adaptive controller, when the room's adaptive
	// admission is on; nil otherwise.
	Adaptive *AdaptiveLive
}

// NetworkRow is a client network (/24, /64) and its pre-queue joins.
type NetworkRow struct {
	Network string
	Entries int64
}

// Failures counts refused orders by the answer the buyer got.
type Failures struct {
	Unauthorized, Conflict, TooFast, SoldOut, Unavailable, Other int64
}

// InstanceRow is one server instance and its open SSE connections.
type InstanceRow struct {
	ID  string
	SSE int64
}

// TimelineItem is one event of the sale.
type TimelineItem struct {
	At     time.Time
	Action string
	Actor  string
	Target string
	Old    string
	New    string
	// Changes are the fields an entry of JSON objects (room settings)
	// changed, in place of Old and New.
	Changes []TimelineChange
}

// TimelineChange is one changed field of a timeline entry.
type TimelineChange struct{ Field, Old, New string }

// text is "field: old → new".
func (c TimelineChange) text() string { return c.Field + ": " + c.Old + " → " + c.New }

// rows are the failure figures with their words, in a fixed order.
func (f Failures) rows(t DashText) []failureRow {
	return []failureRow{
		{"dash-fail-401", t.Fail401, f.Unauthorized},
		{"dash-fail-409", t.Fail409, f.Conflict},
		{"dash-fail-429", t.Fail429, f.TooFast},
		{"dash-fail-soldout", t.FailSoldOut, f.SoldOut},
		{"dash-fail-503", t.Fail503, f.Unavailable},
		{"dash-fail-other", t.FailOther, f.Other},
	}
}

type failureRow struct {
	id, label string
	n         int64
}

func (l DashboardLive) eta(t DashText) string {
	switch {
	case l.Paused:
		return "— (" + t.ETAPaused + ")"
	case l.ETA == nil:
		return "—"
	}
	return For(t.Lang).Duration(*l.ETA)
}

func (l DashboardLive) admitMeasured(t DashText) string {
	return Fill(t.AdmitMeasured, "n", FormatValue(l.AdmitMeasured, UnitRate, t.Lang))
}

func (l DashboardLive) admitSet(t DashText) string {
	return Fill(t.AdmitSet, "set", FormatValue(l.AdmitSet, UnitRate, t.Lang))
}

func (l DashboardLive) soldOfStock(t DashText) string {
	return Fill(Fill(t.SoldOfStock, "n", FormatCount(l.Sold)), "of", FormatCount(l.Left))
}

// soldPercent is the share of the stock sold, for the meter: 0 to 100.
func (l DashboardLive) soldPercent() string {
	total := l.Sold + l.Left
	if total <= 0 {
		return "0"
	}
	return strconv.Itoa(int(math.Round(float64(l.Sold) * 100 / float64(total))))
}

func (l DashboardLive) loc() *time.Location {
	if l.Loc == nil {
		return time.UTC
	}
	return l.Loc
}

func (l DashboardLive) updated(t DashText) string {
	at := l.At.In(l.loc())
	return Fill(t.Updated, "when", at.Format("15:04:05")+" "+UTCOffset(at))
}

// The figures that are read, and may fail, on their own.
const (
	FigLine     = "line"     // waiting, pre-queued, active
	FigSeries   = "series"   // the per-second record: rates, latency, failures, charts
	FigStock    = "stock"    // orders placed, sold and left
	FigTimeline = "timeline" // the sale's events
)

// missing reports that figure fig could not be read this second.
func (l DashboardLive) missing(fig string) bool {
	_, ok := l.Missing[fig]
	return ok
}

// asOf says when figure fig was last read, in the operator's zone; empty
// when it never was.
func (l DashboardLive) asOf(fig string, t DashText) string {
	at := l.Missing[fig]
	if at.IsZero() {
		return t.NeverRead
	}
	at = at.In(l.loc())
	return Fill(t.AsOf, "when", at.Format("15:04:05")+" "+UTCOffset(at))
}

// when is a timeline entry's time in the operator's zone, with its offset.
func (l DashboardLive) when(at time.Time) string {
	at = at.In(l.loc())
	return at.Format("01-02 15:04:05") + " " + UTCOffset(at)
}

// issuerFailed says how often the issuers failed and when last.
func (l DashboardLive) issuerFailed(t DashText) string {
	return Fill(Fill(t.IssuerFailed, "n", FormatCount(l.IssuerFailed)), "when", l.when(l.IssuerFailedAt))
}

// flaggedCount says how many networks are flagged.
func (l DashboardLive) flaggedCount(t DashText) string {
	return Fill(t.FlaggedCount, "n", FormatCount(int64(len(l.Flagged))))
}

// flagRule says from how many joins a network is flagged.
func (l DashboardLive) flagRule(t DashText) string {
	return Fill(t.FlagRule, "n", FormatCount(l.FlagJoins))
}

// phase names the room's phase; "" for an unknown one.
func (l DashboardLive) phase(t DashText) string { return t.Phases[l.Phase] }

// change is a timeline entry's "old → new", or the one of them there is.
func (e TimelineItem) change() string {
	switch {
	case e.Old != "" && e.New != "":
		return e.Old + " → " + e.New
	case e.New != "":
		return e.New
	}
	return e.Old
}
