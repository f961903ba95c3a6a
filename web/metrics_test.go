package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"waitingroom/server/issuer"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/roomsync"
	"waitingroom/server/salelog"
	"waitingroom/server/servicetest"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
)

// Metrics is what the order path and the issuer call.
var (
	_ salelog.OrderObserver = (*Metrics)(nil)
	_ issuer.Observer       = (*Metrics)(nil)
	_ issuer.RoomsObserver  = (*Metrics)(nil)
)

// TestObserveOrder counts orders placed and failed by reason, times every
// attempt, and keeps the labels bounded: a room the issuer does not list
// and a reason that is not an error code cannot make new series.
func TestObserveOrder(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	m.Listed([]string{"sale", "other-sale"}, nil)
	tests := []struct {
		room, reason string
		took         time.Duration
		// the series it must count under
		wantRoom, wantReason string
	}{
		{"sale", OrderPlaced, 20 * time.Millisecond, "sale", OrderPlaced},
		{"sale", OrderPlaced, 3 * time.Second, "sale", OrderPlaced},
		{"sale", "sold_out", 8 * time.Millisecond, "sale", "sold_out"},
		{"other-sale", "rate_limited", time.Millisecond, "other-sale", "rate_limited"},
		{"sale", "Not A Code<script>", time.Millisecond, "sale", "other"},
		{"sale", strings.Repeat("x", 33), time.Millisecond, "sale", "other"},
		{"no-such-room", "token_invalid", time.Millisecond, unlistedRoom, "token_invalid"},
		{"/../etc", OrderPlaced, time.Millisecond, unlistedRoom, OrderPlaced},
	}
	for _, tt := range tests {
		t.Run(tt.room+" "+tt.reason, func(t *testing.T) {
			var c prometheus.Counter
			if tt.wantReason == OrderPlaced {
				c = m.OrdersPlaced.WithLabelValues(tt.wantRoom)
			} else {
				c = m.OrdersFailed.WithLabelValues(tt.wantRoom, tt.wantReason)
			}
			before := testutil.ToFloat64(c)
			m.ObserveOrder(tt.room, tt.reason, tt.took)
			if got := testutil.ToFloat64(c) - before; got != 1 {
				t.Errorf("counted %v under room=%q reason=%q, want 1", got, tt.wantRoom, tt.wantReason)
			}
		})
	}
	// Every attempt is timed, in buckets from 5 ms to 5 s.
	var d dto.Metric
	if err := m.OrderDuration.WithLabelValues("sale").(prometheus.Metric).Write(&d); err != nil {
		t.Fatal(err)
	}
	h := d.GetHistogram()
	wantCum := map[float64]uint64{0.005: 2, 0.01: 3, 0.025: 4, 2.5: 4, 5: 5}
	if h.GetSampleCount() != 5 || h.GetSampleSum() < 3.03 || h.GetSampleSum() > 3.031 {
		t.Errorf("sale's order durations: count %d sum %v, want 5 and 3.03", h.GetSampleCount(), h.GetSampleSum())
	}
	if b := h.GetBucket(); len(b) != 10 || b[0].GetUpperBound() != 0.005 || b[len(b)-1].GetUpperBound() != 5 {
		t.Errorf("buckets %v, want 10 from 5 ms to 5 s", b)
	}
	for _, b := range h.GetBucket() {
		if want, ok := wantCum[b.GetUpperBound()]; ok && b.GetCumulativeCount() != want {
			t.Errorf("le=%v holds %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}

	// A room that is deleted (no longer listed) loses its order series.
	m.Listed([]string{"other-sale"}, nil)
	if n := testutil.CollectAndCount(m.OrdersPlaced) + testutil.CollectAndCount(m.OrderDuration); n != 3 {
		t.Errorf("%d placed and duration series after deleting room sale, want 3 (%s's and other-sale's)", n, unlistedRoom)
	}
	if n := testutil.CollectAndCount(m.OrdersFailed); n != 2 {
		t.Errorf("%d failure series after deleting room sale, want 2 (other-sale's and %s's)", n, unlistedRoom)
	}
}

// TestObserveOrderBoundsReasons: past maxReasons distinct codes, new ones
// count as "other".
func TestObserveOrderBoundsReasons(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	m.Listed([]string{"sale"}, nil)
	for i := range maxReasons + 10 {
		m.ObserveOrder("sale", "code_"+itoaTest(i), time.Millisecond)
	}
	if n := testutil.CollectAndCount(m.OrdersFailed); n != maxReasons+1 {
		t.Fatalf("%d failure series, want %d reasons and other", n, maxReasons+1)
	}
	if got := testutil.ToFloat64(m.OrdersFailed.WithLabelValues("sale", "other")); got != 10 {
		t.Fatalf("other = %v, want 10", got)
	}
}

func itoaTest(i int) string { return string(rune('a'+i/26)) + string(rune('a'+i%26)) }

// TestObserveOrderRacingListed: orders of a room observed while the
// issuer's listing forgets it leave no series of the room behind. (The
// race is narrow: a listing that drops a room's series before its last
// observation ends fails this in some runs, not all.)
func TestObserveOrderRacingListed(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	gone := prometheus.Labels{"room": "gone"}
	for i := range 5000 {
		m.Listed([]string{"gone"}, nil)
		var ready, wg sync.WaitGroup
		start := make(chan struct{})
		for j := range 4 {
			ready.Add(1)
			wg.Go(func() {
				ready.Done()
				<-start
				for k := range 3 {
					reason := OrderPlaced
					if (j+k)%2 == 1 {
						reason = "sold_out"
					}
					m.ObserveOrder("gone", reason, time.Millisecond)
				}
			})
		}
		ready.Add(1)
		wg.Go(func() {
			ready.Done()
			<-start
			m.Listed(nil, nil)
		})
		ready.Wait()
		close(start)
		wg.Wait()
		for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{m.OrderDuration, m.OrdersPlaced, m.OrdersFailed} {
			if n := v.DeletePartialMatch(gone); n != 0 {
				t.Fatalf("round %d: %d series of a room no longer listed", i, n)
			}
		}
	}
}

// ownRooms narrows the engine's list of rooms to this test's, so that
// parallel tests sharing the Redis database do not show up; a deleted
// room drops out of the list as it does in production.
type ownRooms struct {
	*queue.Engine
	names []string
}

func (o ownRooms) Rooms(ctx context.Context) ([]string, error) {
	all, err := o.Engine.Rooms(ctx)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(n string) bool { return !slices.Contains(o.names, n) }), nil
}

// TestRoomStateGauges runs the real issuer over real rooms: each room's
// paused, sold-out and phase gauges follow its state, and a deleted room's
// series all go at the next tick.
func TestRoomStateGauges(t *testing.T) {
	t.Parallel()
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	ctx := context.Background()
	open, paused, soldOut, later := servicetest.RoomName(t, rdb), servicetest.RoomName(t, rdb), servicetest.RoomName(t, rdb), servicetest.RoomName(t, rdb)
	opens := time.Now().Add(time.Hour)
	for name, mut := range map[string]func(*room.Settings){
		open:    func(*room.Settings) {},
		paused:  func(s *room.Settings) { s.Paused = true },
		soldOut: func(*room.Settings) {},
		later:   func(s *room.Settings) { s.OpensAt = &opens },
	} {
		s := room.Defaults(name)
		mut(&s)
		if err := eng.SaveRoom(ctx, name, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.SetSoldOut(ctx, soldOut, true); err != nil {
		t.Fatal(err)
	}
	m := NewMetrics()
	loop := issuer.New(ownRooms{eng, []string{open, paused, soldOut, later}}, time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)), m)
	loop.Tick(ctx)

	tests := []struct {
		room            string
		paused, soldOut float64
		phase           string
	}{
		{open, 0, 0, queue.PhaseOpen},
		{paused, 1, 0, queue.PhaseOpen},
		{soldOut, 0, 1, queue.PhaseOpen},
		{later, 0, 0, queue.PhaseScheduled},
	}
	for _, tt := range tests {
		if got := testutil.ToFloat64(m.RoomPaused.WithLabelValues(tt.room)); got != tt.paused {
			t.Errorf("%s: waitingroom_room_paused = %v, want %v", tt.room, got, tt.paused)
		}
		if got := testutil.ToFloat64(m.RoomSoldOut.WithLabelValues(tt.room)); got != tt.soldOut {
			t.Errorf("%s: waitingroom_room_sold_out = %v, want %v", tt.room, got, tt.soldOut)
		}
		for _, ph := range roomPhases {
			want := 0.0
			if ph == tt.phase {
				want = 1
			}
			if got := testutil.ToFloat64(m.RoomPhase.WithLabelValues(tt.room, ph)); got != want {
				t.Errorf("%s: waitingroom_room_phase{phase=%q} = %v, want %v", tt.room, ph, got, want)
			}
		}
	}

	// Deleting a room drops every series of it at the next tick.
	m.ObserveOrder(paused, OrderPlaced, time.Millisecond)
	if _, err := eng.DeleteRoom(ctx, paused); err != nil {
		t.Fatal(err)
	}
	loop.Tick(ctx)
	for name, n := range map[string]int{
		"waitingroom_waiting": testutil.CollectAndCount(m.Waiting), "waitingroom_active_slots": testutil.CollectAndCount(m.Active),
		"waitingroom_admitted_total": testutil.CollectAndCount(m.Admitted), "waitingroom_departures": testutil.CollectAndCount(m.Departures) / 3,
		"waitingroom_room_paused": testutil.CollectAndCount(m.RoomPaused), "waitingroom_room_sold_out": testutil.CollectAndCount(m.RoomSoldOut),
		"waitingroom_room_phase": testutil.CollectAndCount(m.RoomPhase) / len(roomPhases),
	} {
		if n != 3 {
			t.Errorf("%s has %d rooms after deleting one of 4, want 3", name, n)
		}
	}
	if n := testutil.CollectAndCount(m.OrdersPlaced) + testutil.CollectAndCount(m.OrderDuration); n != 0 {
		t.Errorf("the deleted room kept %d order series", n)
	}
}

// fixedReady is a readiness check with a fixed report.
type fixedReady roomsync.Report

func (f fixedReady) Check(context.Context) roomsync.Report { return roomsync.Report(f) }

// TestUpGauges: waitingroom_redis_up and waitingroom_db_up report the
// readiness check at scrape time; without a database check (Options.Ready
// unset) only Redis is reported, from Health against real Redis.
func TestUpGauges(t *testing.T) {
	t.Parallel()
	down := errors.New("down")
	tests := []struct {
		name      string
		mut       func(*Options)
		redis, db float64
		reportsDB bool
	}{
		{"health, Redis answers", nil, 1, 0, false},
		{"health, Redis down", func(o *Options) { o.Health = func(context.Context) error { return down } }, 0, 0, false},
		{"ready", func(o *Options) {
			o.Ready = fixedReady{Ready: true, Checks: map[string]string{roomsync.CheckRedis: roomsync.OK, roomsync.CheckDatabase: roomsync.OK}}
		}, 1, 1, true},
		{"database unreachable", func(o *Options) {
			o.Ready = fixedReady{Checks: map[string]string{roomsync.CheckRedis: roomsync.OK, roomsync.CheckDatabase: roomsync.Unreachable}}
		}, 1, 0, true},
		{"database migrating, Redis down", func(o *Options) {
			o.Ready = fixedReady{Checks: map[string]string{roomsync.CheckRedis: roomsync.Unreachable, roomsync.CheckDatabase: roomsync.Migrating}}
		}, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.mut)
			got := map[string]float64{}
			mfs, err := h.web.metrics.Registry.Gather()
			if err != nil {
				t.Fatal(err)
			}
			for _, mf := range mfs {
				if n := mf.GetName(); n == "waitingroom_redis_up" || n == "waitingroom_db_up" {
					got[n] = mf.GetMetric()[0].GetGauge().GetValue()
				}
			}
			if v, ok := got["waitingroom_redis_up"]; !ok || v != tt.redis {
				t.Errorf("waitingroom_redis_up = %v (reported %v), want %v", v, ok, tt.redis)
			}
			if v, ok := got["waitingroom_db_up"]; ok != tt.reportsDB || v != tt.db {
				t.Errorf("waitingroom_db_up = %v (reported %v), want %v (reported %v)", v, ok, tt.db, tt.reportsDB)
			}
		})
	}
}

// TestDeparturesMetric exports each room's departures by reason, as the
// issuer's tick reads them from Redis.
func TestDeparturesMetric(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	m.Ticked("sale", queue.Admission{Departures: queue.Departures{Leaves: 3, Abandoned: 5, Expired: 7}}, 0, nil)
	for reason, want := range map[string]float64{"leave": 3, "abandoned": 5, "expired": 7} {
		if got := testutil.ToFloat64(m.Departures.WithLabelValues("sale", reason)); got != want {
			t.Errorf("waitingroom_departures{reason=%q} = %v, want %v", reason, got, want)
		}
	}
}

// TestListedDropsOthersGauges: a room that another instance ticks now
// loses the gauges of this instance's ticks, so that each room's gauges
// come from one instance; its counters stay, and a room still ticked here
// keeps its gauges.
func TestListedDropsOthersGauges(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	a := queue.Admission{Waiting: 9, Active: 2, Phase: queue.PhaseOpen, Visitors: []string{"v1"}}
	m.Ticked("mine", a, 0, nil)
	m.Ticked("moved", a, 0, nil)
	tests := []struct {
		room             string
		gauges, admitted int
	}{{"mine", 1, 1}, {"moved", 0, 1}}
	m.Listed([]string{"mine", "moved"}, []string{"mine"})
	for _, tt := range tests {
		t.Run(tt.room, func(t *testing.T) {
			for name, v := range map[string]prometheus.Collector{"waiting": m.Waiting, "active": m.Active, "paused": m.RoomPaused, "sold out": m.RoomSoldOut} {
				if n := seriesOf(t, v, tt.room); n != tt.gauges {
					t.Errorf("%s: %d series, want %d", name, n, tt.gauges)
				}
			}
			if n := seriesOf(t, m.Admitted, tt.room); n != tt.admitted {
				t.Errorf("admitted: %d series, want %d", n, tt.admitted)
			}
		})
	}
	// Ticked here again, the room shows its gauges again.
	m.Ticked("moved", a, 0, nil)
	if got := testutil.ToFloat64(m.Waiting.WithLabelValues("moved")); got != 9 {
		t.Errorf("waiting of a room ticked here again = %v, want 9", got)
	}
}

// TestSleptTick: a sleeping room's answer keeps the figures of the room's
// last tick here, and gives a room that has none here (it came to this
// instance asleep) nobody waiting, so that it stays listed; it times no
// tick.
func TestSleptTick(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		tickedFirst bool
		wantWaiting float64
	}{
		{"ticked here before", true, 9},
		{"new here", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMetrics()
			if tt.tickedFirst {
				m.Ticked("r", queue.Admission{Waiting: 9}, time.Millisecond, nil)
			}
			var d dto.Metric
			if err := m.TickDuration.Write(&d); err != nil {
				t.Fatal(err)
			}
			count := d.GetHistogram().GetSampleCount()
			m.Ticked("r", queue.Admission{Slept: true}, time.Millisecond, nil)
			if n := seriesOf(t, m.Waiting, "r"); n != 1 {
				t.Fatalf("%d waiting series, want 1", n)
			}
			if got := testutil.ToFloat64(m.Waiting.WithLabelValues("r")); got != tt.wantWaiting {
				t.Errorf("waiting %v, want %v", got, tt.wantWaiting)
			}
			if err := m.TickDuration.Write(&d); err != nil {
				t.Fatal(err)
			}
			if d.GetHistogram().GetSampleCount() != count {
				t.Errorf("a slept answer was timed as a tick")
			}
		})
	}
}

// seriesOf counts c's series labelled with room.
func seriesOf(t *testing.T, c prometheus.Collector, room string) int {
	t.Helper()
	ch := make(chan prometheus.Metric, 64)
	go func() { c.Collect(ch); close(ch) }()
	n := 0
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		for _, l := range d.GetLabel() {
			if l.GetName() == "room" && l.GetValue() == room {
				n++
			}
		}
	}
	return n
}

// TestAdaptedMetrics: each decision applied counts under its room and
// reason and sets the room's rate gauge; a room the issuer does not list
// and a reason that is no code are not recorded.
func TestAdaptedMetrics(t *testing.T) {
	t.Parallel()
	m := NewMetrics()
	m.Listed([]string{"sale"}, nil)
	m.Adapted("sale", "increase", 10, 15)
	m.Adapted("sale", "increase", 15, 20)
	m.Adapted("sale", "cut_latency", 20, 14)
	m.Adapted("gone", "increase", 10, 15)
	m.Adapted("sale", "Not a code!", 14, 1)
	for _, tc := range []struct {
		reason string
		want   float64
	}{{"increase", 2}, {"cut_latency", 1}} {
		if got := testutil.ToFloat64(m.AdaptDecisions.WithLabelValues("sale", tc.reason)); got != tc.want {
			t.Errorf("%s: %g decisions, want %g", tc.reason, got, tc.want)
		}
	}
	if got := testutil.ToFloat64(m.AdaptRate.WithLabelValues("sale")); got != 14 {
		t.Errorf("rate %g, want 14", got)
	}
	if n := testutil.CollectAndCount(m.AdaptDecisions); n != 2 {
		t.Errorf("%d decision series, want 2 (the unlisted room and the bad reason left out)", n)
	}
	m.Listed(nil, nil)
	if n := testutil.CollectAndCount(m.AdaptRate); n != 0 {
		t.Errorf("%d rate series after the room went, want 0", n)
	}
}

// The shipped dashboard and alert rules, relative to this package.
const (
	dashboardFile  = "../docs/grafana-dashboard.json"
	alertsFile     = "../docs/alerts.yml"
	alertTestsFile = "../docs/alerts_test.yml"
)

// exportedNames returns every series name /metrics can export: each
// collector is fed once so that its families show, and histograms and
// summaries add their _bucket, _sum and _count series.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	m := NewMetrics()
	m.CountRedisCommands(func() int64 { return 1 })
	m.CountDB(func() sql.DBStats { return sql.DBStats{} })
	m.WatchReadiness(func(context.Context) roomsync.Report {
		return roomsync.Report{Checks: map[string]string{roomsync.CheckRedis: roomsync.OK, roomsync.CheckDatabase: roomsync.OK}}
	})
	m.Ticked("sale", queue.Admission{Phase: queue.PhaseOpen}, time.Millisecond, nil)
	m.ObserveOrder("sale", OrderPlaced, time.Millisecond)
	m.ObserveOrder("sale", "sold_out", time.Millisecond)
	m.Adapted("sale", "increase", 10, 15)
	m.HTTPResponses.WithLabelValues("GET /healthz", "200").Inc()
	m.Rejected.WithLabelValues("idle_conns").Inc()
	m.EnterDuration.Observe(0.001)
	m.FanoutDuration.Observe(0.001)
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		n := mf.GetName()
		names[n] = true
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM:
			names[n+"_bucket"], names[n+"_sum"], names[n+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[n+"_sum"], names[n+"_count"] = true, true
		}
	}
	return names
}

var (
	promqlStrings  = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	promqlMatchers = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	promqlGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	grafanaVars    = regexp.MustCompile(`\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*`)
	promqlToken    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*|[0-9][0-9A-Za-z_.]*`)
	promqlKeywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
		"inf": true, "nan": true, "Inf": true, "NaN": true}
)

// metricNames returns the metric names a PromQL expression selects: the
// identifiers left once strings, label matchers, ranges, groupings,
// Grafana variables, functions, keywords and numbers are taken out.
func metricNames(expr string) []string {
	expr = promqlStrings.ReplaceAllString(expr, " ")
	expr = grafanaVars.ReplaceAllString(expr, " ")
	expr = promqlMatchers.ReplaceAllString(expr, " ")
	expr = promqlGrouping.ReplaceAllString(expr, " ")
	var out []string
	for _, at := range promqlToken.FindAllStringIndex(expr, -1) {
		tok := expr[at[0]:at[1]]
		function := strings.HasPrefix(strings.TrimLeft(expr[at[1]:], " \t\n"), "(")
		if tok[0] >= '0' && tok[0] <= '9' || function || promqlKeywords[tok] {
			continue
		}
		out = append(out, tok)
	}
	return out
}

func TestMetricNamesOfPromQL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ expr, want string }{
		{`sum by (room) (rate(a_total{room=~"$room",x="b c"}[$__rate_interval]))`, "a_total"},
		{`histogram_quantile(0.95, sum by (le) (rate(d_bucket[5m]))) > 1e3`, "d_bucket"},
		{"x == 0 and on (room) (max by (room) (y{phase=\"open\"}) == 1) or z offset 5m", "x y z"},
		{`max without (instance) (${DS}w) / ignoring(code) group_left v`, "w v"},
	} {
		if got := strings.Join(metricNames(tt.expr), " "); got != tt.want {
			t.Errorf("metricNames(%q) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}

// checkExpr fails the test for a metric of expr that /metrics does not
// export, and for an expression that selects no metric at all.
func checkExpr(t *testing.T, where, expr string, names map[string]bool) {
	t.Helper()
	got := metricNames(expr)
	if len(got) == 0 {
		t.Errorf("%s: %q selects no metric", where, expr)
	}
	for _, n := range got {
		if !names[n] {
			t.Errorf("%s: %q uses %s, which web/metrics.go does not export", where, expr, n)
		}
	}
}

type grafanaPanel struct {
	ID         int               `json:"id"`
	Type       string            `json:"type"`
	Title      string            `json:"title"`
	Datasource map[string]string `json:"datasource"`
	Targets    []struct {
		Expr       string            `json:"expr"`
		Datasource map[string]string `json:"datasource"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"`
}

// TestGrafanaDashboard: the dashboard is importable (a Prometheus
// datasource input, schemaVersion 39) and every panel's queries use only
// metrics that /metrics exports, so it cannot drift from web/metrics.go.
func TestGrafanaDashboard(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Inputs []struct {
			Name, Type, PluginID string
		} `json:"__inputs"`
		SchemaVersion int            `json:"schemaVersion"`
		UID           string         `json:"uid"`
		Panels        []grafanaPanel `json:"panels"`
		Templating    struct {
			List []struct {
				Name  string `json:"name"`
				Query struct {
					Query string `json:"query"`
				} `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s is not JSON: %v", dashboardFile, err)
	}
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].Type != "datasource" {
		t.Errorf("inputs %+v, want one DS_PROMETHEUS datasource", d.Inputs)
	}
	if d.SchemaVersion < 36 || d.UID == "" {
		t.Errorf("schemaVersion %d, uid %q: want a current schema and a uid", d.SchemaVersion, d.UID)
	}
	names := exportedNames(t)
	for _, v := range d.Templating.List {
		q, ok := strings.CutPrefix(v.Query.Query, "label_values(")
		if !ok {
			t.Errorf("variable %s: query %q, want label_values(metric, label)", v.Name, v.Query.Query)
			continue
		}
		checkExpr(t, "variable "+v.Name, strings.Split(q, ",")[0], names)
	}
	ids := map[int]bool{}
	queries := 0
	var walk func([]grafanaPanel)
	walk = func(ps []grafanaPanel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("panel id %d is used twice", p.ID)
			}
			ids[p.ID] = true
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			if p.Datasource["uid"] != "${DS_PROMETHEUS}" || len(p.Targets) == 0 {
				t.Errorf("panel %q: datasource %v, %d queries", p.Title, p.Datasource, len(p.Targets))
			}
			for _, q := range p.Targets {
				queries++
				checkExpr(t, "panel "+p.Title, q.Expr, names)
			}
		}
	}
	walk(d.Panels)
	// The panels the issue asks for, by the metric each needs.
	all := string(b)
	for _, want := range []string{"waitingroom_waiting", "waitingroom_admitted_total", "waitingroom_orders_placed_total",
		"waitingroom_order_duration_seconds_bucket", "waitingroom_orders_failed_total", `code=~\"5..\"`,
		"waitingroom_sse_connections", "waitingroom_redis_up", "waitingroom_db_up"} {
		if !strings.Contains(all, want) {
			t.Errorf("the dashboard has no panel on %s", want)
		}
	}
	if queries < 10 {
		t.Errorf("%d queries in the dashboard, want its panels", queries)
	}
}

// alertExprs returns each alert's name and expression from a rules file
// written as docs/alerts.yml is: one "- alert:" per rule, its "expr:" on
// one line or as a block scalar (| or >) below it. promtool checks the
// file itself; this reads enough of it to check the metric names.
func alertExprs(t *testing.T, text string) map[string]string {
	t.Helper()
	out := map[string]string{}
	lines := strings.Split(text, "\n")
	alert := ""
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if name, ok := strings.CutPrefix(trimmed, "- alert:"); ok {
			alert = strings.TrimSpace(name)
			continue
		}
		v, ok := strings.CutPrefix(trimmed, "expr:")
		if !ok {
			continue
		}
		if alert == "" || out[alert] != "" {
			t.Fatalf("line %d: an expr outside an alert rule", i+1)
		}
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, "|") || strings.HasPrefix(v, ">") {
			indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
			var block []string
			for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || len(lines[i+1])-len(strings.TrimLeft(lines[i+1], " ")) > indent) {
				i++
				block = append(block, lines[i])
			}
			v = strings.Join(block, "\n")
		}
		out[alert] = v
	}
	return out
}

// TestAlertRules: the rules cover what the issue names, each says what
// to do (summary and description), and use only metrics /metrics
// exports; promtool checks the file and runs docs/alerts_test.yml.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	exprs := alertExprs(t, string(b))
	for _, want := range []string{"WaitingroomOrderLatencyOverBudget", "WaitingroomHTTP5xxRate", "WaitingroomRedisDown",
		"WaitingroomDatabaseDown", "WaitingroomAdmissionStalled"} {
		if exprs[want] == "" {
			t.Errorf("%s has no rule %s", alertsFile, want)
		}
	}
	if n := strings.Count(string(b), "- alert:"); n != len(exprs) ||
		strings.Count(string(b), "summary:") != n || strings.Count(string(b), "description:") != n {
		t.Errorf("%d alerts, %d exprs read, %d summaries, %d descriptions: want one of each per alert",
			n, len(exprs), strings.Count(string(b), "summary:"), strings.Count(string(b), "description:"))
	}
	names := exportedNames(t)
	for alert, expr := range exprs {
		checkExpr(t, "alert "+alert, expr, names)
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		msg := "promtool is not installed (Debian package prometheus): docs/alerts.yml is NOT checked"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip("SKIPPING: " + msg + " (CI=true makes this a failure)")
	}
	for _, args := range [][]string{{"check", "rules", alertsFile}, {"test", "rules", alertTestsFile}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
