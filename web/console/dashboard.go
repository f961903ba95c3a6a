package console

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/singleflight"

	"waitingroom/server/audit"
	"waitingroom/server/livestats"
	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/views"
	"waitingroom/web/response"
)

// LiveStats is the rooms' per-second record (server/livestats.Reader).
type LiveStats interface {
	Series(ctx context.Context, room string, since time.Time) ([]livestats.Second, error)
	Instances(ctx context.Context) ([]livestats.Instance, error)
}

// SaleEvents lists the audit log, newest first (server/audit.Log): the
// dashboard's timeline.
type SaleEvents interface {
	List(ctx context.Context, f audit.Filter) ([]audit.Entry, error)
}

// StockSummaries reads a room's sales against its stock
// (order.Service).
type StockSummaries interface {
	StockSummary(ctx context.Context, room string) (order.StockSummary, error)
}

const (
	// dashWindow is how far back the dashboard's charts go.
	dashWindow = 10 * time.Minute
	// dashSeconds is dashWindow in seconds: a chart's values.
	dashSeconds = int(dashWindow / time.Second)
	// rateSeconds are the full seconds the figures' rates are measured
	// over.
	rateSeconds = 10
	// latencyWithin is how old the last order latency shown may be.
	latencyWithin = 60
	// timelineLen is how many of the sale's events the timeline shows.
	timelineLen = 20
	// timelinePages bounds the audit pages read to fill the timeline.
	timelinePages = 3
	// timelineValue bounds an event's old and new values, in characters.
	timelineValue = 120
	// maxInstancesShown bounds the instance table.
	maxInstancesShown = 50
	// dashReadTimeout bounds each read of one dashboard second.
	dashReadTimeout = 2 * time.Second
	// DefaultDashboardStreams bounds the open dashboard streams of one
	// instance.
	DefaultDashboardStreams = 50
)

// dashboard is the live dashboard's dependencies and stream count.
type dashboard struct {
	live    LiveStats
	events  SaleEvents
	stock   StockSummaries
	streams atomic.Int64
	limit   int64
	// writeTimeout bounds each write of a stream (DashWriteTimeout).
	writeTimeout time.Duration
	// sessionCheck is how often a stream checks its session
	// (DashSessionCheck).
	sessionCheck time.Duration
	frames       frameCache
	render       singleflight.Group
	// lastGood is when each room's figures were last read.
	lastGood lastGoodCache
}

// maxLastGood bounds the rooms whose last good readings are kept.
const maxLastGood = 1024

// lastGoodCache holds, per room and figure, when the figure was last read:
// what a figure that cannot be read says instead of 0. It keeps at most
// maxLastGood rooms, forgetting the least recently read.
type lastGoodCache struct {
	mu sync.Mutex
	m  map[string]map[string]time.Time
}

func (c *lastGoodCache) put(room, fig string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]map[string]time.Time{}
	}
	figs := c.m[room]
	if figs == nil {
		if len(c.m) >= maxLastGood {
			c.evictOldest()
		}
		figs = map[string]time.Time{}
		c.m[room] = figs
	}
	figs[fig] = at
}

// evictOldest forgets the room whose latest reading is the oldest.
func (c *lastGoodCache) evictOldest() {
	var oldest string
	var oldestAt time.Time
	for room, figs := range c.m {
		var latest time.Time
		for _, at := range figs {
			if at.After(latest) {
				latest = at
			}
		}
		if oldest == "" || latest.Before(oldestAt) {
			oldest, oldestAt = room, latest
		}
	}
	delete(c.m, oldest)
}

// get returns when room's figure fig was last read; zero when never.
func (c *lastGoodCache) get(room, fig string) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[room][fig]
}

// newDashboard takes the dashboard's dependencies from deps: the timeline
// reads the Audit log; a nil Live, Stock or Audit leaves those figures
// out.
func newDashboard(deps Deps) *dashboard {
	d := &dashboard{live: deps.Live, stock: deps.Stock, limit: int64(deps.DashboardStreams),
		writeTimeout: DashWriteTimeout, sessionCheck: DashSessionCheck}
	if deps.Audit != nil {
		d.events = deps.Audit
	}
	if d.limit <= 0 {
		d.limit = DefaultDashboardStreams
	}
	return d
}

// acquire takes one of the instance's dashboard streams; false when all
// are taken.
func (d *dashboard) acquire() bool {
	if d.streams.Add(1) > d.limit {
		d.streams.Add(-1)
		return false
	}
	return true
}

func (d *dashboard) release() { d.streams.Add(-1) }

// roomDashboard serves GET /admin/rooms/{room}: the room's figures as
// they are now, kept live by console-live.js over the SSE stream.
func (s *Console) roomDashboard(w http.ResponseWriter, r *http.Request, sess Session) {
	name := r.PathValue("room")
	t := views.DashTextFor(Lang(r))
	if !room.ValidName(name) {
		s.Error(w, r, http.StatusNotFound, views.Fill(t.NoRoom, "room", name))
		return
	}
	loc, zone := dashZone(r)
	live, err := s.dashboardSecond(r.Context(), name, s.clk.Now(), loc, t)
	if err != nil {
		s.dashboardFailed(w, r, name, t, err)
		return
	}
	liveURL := "/admin/rooms/" + name + "/live"
	if zone != defaultZone {
		liveURL += "?tz=" + url.QueryEscape(zone)
	}
	page := views.DashboardPage{
		Page: s.consolePage(r, sess, views.Fill(t.Title, "room", name), "rooms"),
		Room: name, T: t, Live: live,
		LiveURL:     liveURL,
		SettingsURL: "/admin/rooms/" + name + "/settings",
		CSS:         s.assetURL("console-dashboard.css"),
		JS:          s.assetURL("console-live.js"),
	}
	response.HTMLHeaders(w)
	w.Header().Set("Cache-Control", "no-store")
	if err := views.ConsoleDashboard(page).Render(r.Context(), w); err != nil {
		s.log.Warn("console: render dashboard", "room", name, "err", err)
	}
}

// dashZone is the operator's time zone, as on the orders and audit pages
// (the "tz" parameter, Asia/Seoul by default; an unknown zone is the
// default), and its name.
func dashZone(r *http.Request) (*time.Location, string) {
	loc, zone, _ := consoleZone(r)
	return loc, zone
}

// dashboardFailed answers a dashboard whose room cannot be read.
func (s *Console) dashboardFailed(w http.ResponseWriter, r *http.Request, name string, t views.DashText, err error) {
	if errors.Is(err, room.ErrNotFound) {
		s.Error(w, r, http.StatusNotFound, views.Fill(t.NoRoom, "room", name))
		return
	}
	s.log.Error("console: dashboard", "room", name, "err", err)
	s.Error(w, r, http.StatusServiceUnavailable, t.Unavailable)
}

// dashboardSecond reads room name as it is at now. It fails only when the
// room's settings cannot be read (room.ErrNotFound when there is no such
// room). Each figure is read with its own dashReadTimeout, so that a slow
// one leaves the others; one that cannot be read marks the second
// Unavailable and is Missing, with the time of its last good reading.
func (s *Console) dashboardSecond(ctx context.Context, name string, now time.Time, loc *time.Location, t views.DashText) (views.DashboardLive, error) {
	read := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, dashReadTimeout) }
	rctx, cancel := read()
	set, err := s.rooms.Room(rctx, name)
	cancel()
	if err != nil {
		return views.DashboardLive{}, err
	}
	l := views.DashboardLive{At: now, Loc: loc, Phase: room.PhaseAt(set, now), Paused: set.Paused, AdmitSet: set.Rate, P50: math.NaN(), P95: math.NaN()}
	// got records whether figure fig (a views.Fig*, or "" for one that
	// has no place of its own) was read.
	got := func(fig, what string, err error) bool {
		if err == nil {
			if fig != "" {
				s.dash.lastGood.put(name, fig, now)
			}
			return true
		}
		s.log.Warn("console: dashboard read", "room", name, "what", what, "err", err)
		l.Unavailable = true
		if fig != "" {
			if l.Missing == nil {
				l.Missing = map[string]time.Time{}
			}
			l.Missing[fig] = s.dash.lastGood.get(name, fig)
		}
		return false
	}
	rctx, cancel = read()
	st, err := s.rooms.Stats(rctx, name)
	cancel()
	if got(views.FigLine, "stats", err) {
		l.Waiting, l.Prequeued, l.Active, l.SoldOut = st.Waiting, st.Prequeued, st.Active, st.SoldOut
		l.Gate = set.Gate.TargetURL != "" || st.SessionsOpened > 0
		l.Sessions, l.SessionsOpened, l.SessionsEnded, l.Idle = st.Sessions, st.SessionsOpened, st.SessionsEnded, st.SessionsIdle
		l.AdmitMeasured = st.RateEWMA
	}

	var series []livestats.Second
	if s.dash.live != nil {
		rctx, cancel = read()
		series, err = s.dash.live.Series(rctx, name, now.Add(-dashWindow))
		cancel()
		got(views.FigSeries, "series", err)
		rctx, cancel = read()
		ins, err := s.dash.live.Instances(rctx)
		cancel()
		got("", "instances", err)
		l.Instances = instanceRows(ins)
	}
	sum := summarize(series, now)
	if sum.measured {
		l.AdmitMeasured = sum.admitted
	}
	l.OrdersPerSec, l.P50, l.P95, l.Failures = sum.orders, sum.p50, sum.p95, sum.failures
	l.IssuerFailed, l.IssuerFailedAt = sum.issuerFailed, sum.issuerFailedAt
	l.Charts = dashCharts(series, now, t)
	l.ETA = lastInLineETA(l.Waiting, l.AdmitMeasured, l.Paused)

	rctx, cancel = read()
	seen, flagged, threshold, err := s.nets.Flagged(rctx, name, now)
	cancel()
	if got("", "networks", err) {
		l.Networks, l.Flagged, l.FlagJoins = seen, flagged, threshold
	}

	if s.dash.stock != nil {
		rctx, cancel = read()
		ss, err := s.dash.stock.StockSummary(rctx, name)
		cancel()
		if got(views.FigStock, "stock", err) {
			l.Placed, l.Sold, l.Left = ss.Orders, ss.Sold, ss.Left
		}
	}
	if set.Adaptive {
		rctx, cancel = read()
		l.Adaptive, err = s.dashboardAdaptive(rctx, name, set, now, t)
		cancel()
		got("", "adaptive", err)
	}
	if s.dash.events != nil {
		rctx, cancel = read()
		l.Timeline, err = timeline(rctx, s.dash.events, name, t.Lang)
		cancel()
		got(views.FigTimeline, "timeline", err)
	}
	if _, ok := l.Missing[views.FigLine]; ok {
		l.ETA = nil // the line is not known
	}
	return l, nil
}

// lastInLineETA is the wait of the last of waiting at perSecond
// admissions, as the queue estimates a rank's (queue.ETA); nil when
// paused or nothing is admitted. An empty line waits nothing.
func lastInLineETA(waiting int64, perSecond float64, paused bool) *int64 {
	if waiting <= 0 && !paused {
		zero := int64(0)
		return &zero
	}
	return queue.ETA(waiting-1, perSecond, nil, paused)
}

// seriesSummary is what the figures take from the last seconds.
type seriesSummary struct {
	// measured: a second of the rate window was recorded, so admitted
	// and orders are measured, not unknown.
	measured         bool
	admitted, orders float64
	p50, p95         float64 // ms; NaN when no recent second had orders
	failures         views.Failures
	// issuerFailed counts the issuers' failed ticks and draws of the
	// window; issuerFailedAt is the last second with one.
	issuerFailed   int64
	issuerFailedAt time.Time
}

// summarize reads the figures from series at now: admissions and orders
// per second over the last rateSeconds full seconds (the current one is
// still counting), the latest order latency of the last minute, and the
// failures of the whole window by the answer the buyer got.
func summarize(series []livestats.Second, now time.Time) seriesSummary {
	sum := seriesSummary{p50: math.NaN(), p95: math.NaN()}
	current := now.Truncate(time.Second)
	var n int
	var latest time.Time
	for _, sec := range series {
		at := sec.At.Truncate(time.Second)
		if at.After(current) || !at.After(current.Add(-dashWindow)) {
			continue
		}
		age := int(current.Sub(at) / time.Second)
		if age >= 1 && age <= rateSeconds {
			n++
			sum.admitted += float64(max(sec.Admitted, 0))
			sum.orders += float64(max(sec.Placed, 0))
		}
		if age <= latencyWithin && sec.P95 > 0 && at.After(latest) {
			latest = at
			sum.p50, sum.p95 = millis(sec.P50), millis(sec.P95)
		}
		for reason, c := range sec.Failed {
			addFailure(&sum.failures, reason, max(c, 0))
		}
		if sec.IssuerFailed > 0 {
			sum.issuerFailed += sec.IssuerFailed
			if at.After(sum.issuerFailedAt) {
				sum.issuerFailedAt = at
			}
		}
	}
	if n > 0 {
		sum.measured = true
		sum.admitted /= float64(n)
		sum.orders /= float64(n)
	}
	return sum
}

// addFailure counts c refused orders of reason (salelog.Reason) under the
// answer the buyer got.
func addFailure(f *views.Failures, reason string, c int64) {
	switch reason {
	case "token_missing", "token_invalid":
		f.Unauthorized += c
	case "token_in_use", "token_used":
		f.Conflict += c
	case "rate_limited":
		f.TooFast += c
	case "sold_out":
		f.SoldOut += c
	case "unavailable":
		f.Unavailable += c
	case "placed":
	default:
		f.Other += c
	}
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// dashCharts lays series on the window's seconds (NaN where none was
// recorded) and makes the dashboard's four charts.
func dashCharts(series []livestats.Second, now time.Time, t views.DashText) []views.Chart {
	start := now.Truncate(time.Second).Add(-time.Duration(dashSeconds-1) * time.Second)
	waiting, admitted, orders, p95 := nanSlots(), nanSlots(), nanSlots(), nanSlots()
	for _, sec := range series {
		i := int(sec.At.Truncate(time.Second).Sub(start) / time.Second)
		if i < 0 || i >= dashSeconds || sec.At.Before(start) {
			continue
		}
		admitted[i], orders[i] = float64(sec.Admitted), float64(sec.Placed)
		if sec.Ticked { // a second without a tick has no line
			waiting[i] = float64(sec.Waiting)
		}
		if sec.P95 > 0 {
			p95[i] = millis(sec.P95) // a second without orders has no latency
		}
	}
	holdGauge(waiting, gaugeHold)
	return []views.Chart{
		{ID: "dash-chart-waiting", Name: t.Waiting, Class: "c-wait", Kind: views.ChartLine, Unit: views.UnitCount, Values: waiting},
		{ID: "dash-chart-admitted", Name: t.AdmittedRate, Class: "c-admit", Kind: views.ChartBar, Unit: views.UnitRate, Values: admitted},
		{ID: "dash-chart-orders", Name: t.OrdersRate, Class: "c-order", Kind: views.ChartBar, Unit: views.UnitRate, Values: orders},
		{ID: "dash-chart-p95", Name: t.P95, Class: "c-p95", Kind: views.ChartLine, Unit: views.UnitMillis, Values: p95},
	}
}

// gaugeHold is how long a gauge keeps its last tick's value on the
// chart: the longest TICK.
const gaugeHold = 60

// holdGauge fills each unrecorded second of v with the last recorded value
// of at most hold seconds before: a gauge stays where the last tick left
// it until the next, and a stopped issuer shows as a gap.
func holdGauge(v []float64, hold int) {
	last, age := math.NaN(), 0
	for i, x := range v {
		switch {
		case !math.IsNaN(x):
			last, age = x, 0
		case !math.IsNaN(last) && age < hold:
			age++
			v[i] = last
		}
	}
}

func nanSlots() []float64 {
	v := make([]float64, dashSeconds)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// instanceRows are the instances by id, at most maxInstancesShown.
func instanceRows(ins []livestats.Instance) []views.InstanceRow {
	rows := make([]views.InstanceRow, 0, min(len(ins), maxInstancesShown))
	for _, in := range ins {
		rows = append(rows, views.InstanceRow{ID: clip(in.ID, 64), SSE: in.SSE})
	}
	slices.SortFunc(rows, func(a, b views.InstanceRow) int { return strings.Compare(a.ID, b.ID) })
	return rows[:min(len(rows), maxInstancesShown)]
}

// timeline returns the room's last timelineLen sale and room events,
// newest first, reading at most timelinePages pages of its audit log.
func timeline(ctx context.Context, events SaleEvents, name, lang string) ([]views.TimelineItem, error) {
	var items []views.TimelineItem
	f := audit.Filter{Room: name, Limit: 100}
	for range timelinePages {
		page, err := events.List(ctx, f)
		if err != nil {
			return items, err
		}
		for _, e := range page {
			if !strings.HasPrefix(e.Action, "sale.") && !strings.HasPrefix(e.Action, "room.") {
				continue
			}
			it := views.TimelineItem{At: e.At, Action: e.Action, Actor: clip(e.Actor, 64),
				Target: clip(e.Target, 64), Old: clip(e.Old, timelineValue), New: clip(e.New, timelineValue)}
			// Settings as JSON objects read field by field, as in the audit log.
			if ch := auditChanges(e.Old, e.New, lang); len(ch) > 0 && ch[0].Field != "" {
				it.Old, it.New = "", ""
				for _, c := range ch {
					it.Changes = append(it.Changes, views.TimelineChange{Field: clip(c.Field, 64),
						Old: clip(c.Old.Full, timelineValue), New: clip(c.New.Full, timelineValue)})
				}
			}
			items = append(items, it)
			if len(items) == timelineLen {
				return items, nil
			}
		}
		if len(page) < f.Limit {
			break
		}
		f.Before = page[len(page)-1].ID
	}
	return items, nil
}

// clip cuts s to n characters, marking the cut with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
