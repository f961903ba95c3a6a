package web

import (
	"context"
	"database/sql"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/roomsync"
	"waitingroom/web/sse"
)

// Metrics are the server's Prometheus collectors, on a registry of their
// own. Metrics implements the issuer's Observer.
type Metrics struct {
	Registry      *prometheus.Registry
	Waiting       *prometheus.GaugeVec
	Active        *prometheus.GaugeVec
	Admitted      *prometheus.CounterVec
	EnterDuration prometheus.Histogram
	TickDuration  prometheus.Histogram
	TickErrors    prometheus.Counter

	SSEConnections prometheus.Gauge
	SSEEvents      prometheus.Counter
	SSESlowDrops   prometheus.Counter
	// SSECorrections counts position events sent off a visitor's cadence
	// because the page's countdown would otherwise have got ahead of them.
	SSECorrections prometheus.Counter
	FanoutDuration prometheus.Histogram
	Rejected       *prometheus.CounterVec
	PageRequests   prometheus.Counter
	// Departures are each room's totals of why people left, from Redis.
	Departures *prometheus.GaugeVec

	// OrdersPlaced, OrdersFailed (by reason) and OrderDuration count the
	// orders this instance took (see ObserveOrder).
	OrdersPlaced  *prometheus.CounterVec
	OrdersFailed  *prometheus.CounterVec
	OrderDuration *prometheus.HistogramVec
	// HTTPResponses counts answers by route pattern and status code.
	HTTPResponses *prometheus.CounterVec
	// RoomPaused, RoomSoldOut and RoomPhase are each room's state as of
	// its last tick, on the instance that ticks it.
	RoomPaused  *prometheus.GaugeVec
	RoomSoldOut *prometheus.GaugeVec
	RoomPhase   *prometheus.GaugeVec
	// GateChecks counts the answers of /gate/check by result: allowed,
	// denied, fail_open, fail_closed.
	GateChecks *prometheus.CounterVec
	// GateSessions and GateSessionEvents are each gated room's sessions
	// in its shop as of its last tick, on the instance that ticks it:
	// live, and the room-wide totals opened, ended (by the shop) and idle.
	GateSessions      *prometheus.GaugeVec
	GateSessionEvents *prometheus.GaugeVec
	// ChallengesIssued, ChallengesSolved and ChallengesRefused (by reason:
	// asked, invalid, expired, stale, other_room, other_network, used,
	// early) count the proofs of work of this instance;
	// ChallengeDifficulty is the maxNumber of the challenges it issued.
	ChallengesIssued    prometheus.Counter
	ChallengesSolved    prometheus.Counter
	ChallengesRefused   *prometheus.CounterVec
	ChallengeDifficulty prometheus.Histogram
	// AccessCodes counts the access codes joins brought to this instance,
	// by result (redeemed, unknown, wrong_room, used_up, expired,
	// throttled); Identities the identities, by result (verified,
	// malformed, signature, expired, not_yet_valid, wrong_room,
	// no_subject, no_expiry, not_taken, keys_unavailable).
	AccessCodes *prometheus.CounterVec
	Identities  *prometheus.CounterVec
	// Bypasses counts the passes let in outside the line on this
	// instance, by kind (staff, link) and result (admitted, full,
	// refused, ended, failed).
	Bypasses *prometheus.CounterVec
	// AdaptDecisions counts the adaptive controller's decisions applied
	// by this instance, by room and reason (adapt.Reasons); AdaptRate is
	// the rate it last set in each room (see Adapted).
	AdaptDecisions *prometheus.CounterVec
	AdaptRate      *prometheus.GaugeVec

	readiness *readinessCollector

	mu sync.Mutex
	// rooms are the rooms that have series; gauged, those that have the
	// gauges of this instance's ticks; listed is the issuer's last list of
	// rooms (nil before its first tick); reasons are the failure reasons
	// seen.
	rooms   map[string]bool
	gauged  map[string]bool
	listed  map[string]bool
	reasons map[string]bool
}

// roomPhases are the values of waitingroom_room_phase's phase label: a room's
// schedule phase as the admission tick reports it ("drawing": the
// pre-queue is frozen for its draw).
var roomPhases = []string{queue.PhaseScheduled, queue.PhasePrequeue, "drawing", queue.PhaseOpen, queue.PhaseClosed}

// unlistedRoom labels the orders of a room the issuer does not list (a
// mistyped or deleted room): no valid room name has an underscore, and
// the label set stays bounded whatever the requests name.
const unlistedRoom = "_unlisted"

// maxReasons bounds the reason label: past it, new reasons count as
// "other".
const maxReasons = 32

// OrderPlaced is ObserveOrder's reason for an order that was placed.
const OrderPlaced = "placed"

// NewMetrics returns the collectors, registered with the Go and process
// collectors (which give RSS and open files) on a fresh registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Waiting: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "waitingroom_waiting", Help: "Visitors waiting in line, as of the room's last tick; shown by the instance that ticks the room.",
		}, []string{"room"}),
		Active: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "waitingroom_active_slots", Help: "Admitted sessions holding a slot, as of the room's last tick (by the instance that ticks it).",
		}, []string{"room"}),
		Admitted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "waitingroom_admitted_total", Help: "Visitors admitted by this instance's issuer.",
		}, []string{"room"}),
		EnterDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "waitingroom_enter_duration_seconds", Help: "Latency of the enter script.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		TickDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "waitingroom_issuer_tick_duration_seconds", Help: "Duration of one room's admission tick.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		TickErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "waitingroom_issuer_tick_errors_total", Help: "Admission ticks that failed.",
		}),
		SSEConnections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "waitingroom_sse_connections", Help: "Open SSE connections on this instance.",
		}),
		SSEEvents: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "waitingroom_sse_events_total", Help: "SSE events written (position and ready).",
		}),
		SSESlowDrops: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "waitingroom_sse_slow_drops_total", Help: "SSE clients dropped because their socket could not take an event at once.",
		}),
		SSECorrections: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "waitingroom_sse_countdown_corrections_total", Help: "Position events sent off the cadence, before a page's countdown got ahead of its visitor.",
		}),
		FanoutDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "waitingroom_sse_fanout_duration_seconds", Help: "Time to push one tick to every local connection of a room.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		PageRequests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "waitingroom_page_requests_total", Help: "Room page requests that reached this instance (an edge cache absorbs the rest).",
		}),
		Rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "waitingroom_rejected_total", Help: "Requests refused (or idle connections closed) by a per-client cap, the cap on console password checks at once (signin_busy) or the cross-site guard.",
		}, []string{"cap"}),
	}
	m.Registry.MustRegister(m.Waiting, m.Active, m.Admitted, m.EnterDuration, m.TickDuration, m.TickErrors,
		m.SSEConnections, m.SSEEvents, m.SSESlowDrops, m.SSECorrections, m.FanoutDuration, m.Rejected, m.PageRequests,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.Departures = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "waitingroom_departures",
		Help: "Room-wide totals as of the room's last tick (by the instance that ticks it): visitors who left the line (reason leave or abandoned) and passes that expired unused (expired).",
	}, []string{"room", "reason"})
	m.Registry.MustRegister(m.Departures)

	m.OrdersPlaced = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "waitingroom_orders_placed_total", Help: "Orders placed through this instance.",
	}, []string{"room"})
	m.OrdersFailed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "waitingroom_orders_failed_total", Help: "Orders refused or failed on this instance, by reason (the API's error codes: sold_out, rate_limited, token_invalid, unavailable...).",
	}, []string{"room", "reason"})
	m.OrderDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "waitingroom_order_duration_seconds", Help: "Time to place an order or refuse it, on this instance.",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
	}, []string{"room"})
	m.HTTPResponses = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "waitingroom_http_responses_total",
		Help: `HTTP answers of the public listener by route pattern ("unmatched" when no route's handler ran: no route matched, or the cross-site guard refused the request) and status code ("hijacked" for connections the handler took over, as SSE streams are).`,
	}, []string{"route", "code"})
	m.RoomPaused = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "waitingroom_room_paused", Help: "1 when the room's admissions are paused, as of the room's last tick; shown by the instance that ticks the room.",
	}, []string{"room"})
	m.RoomSoldOut = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "waitingroom_room_sold_out", Help: "1 when the room is sold out, as of the room's last tick; shown by the instance that ticks the room.",
	}, []string{"room"})
	m.RoomPhase = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "waitingroom_room_phase", Help: "1 for the room's schedule phase (scheduled, prequeue, drawing, open, closed) as of the room's last tick, 0 for the others; shown by the instance that ticks the room.",
	}, []string{"room", "phase"})
	m.GateChecks = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "waitingroom_gate_checks_total", Help: "Gate session checks (/gate/check, and passes redeemed while Redis was away) on this instance, by result: allowed, denied, fail_open, fail_closed.",
	}, []string{"result"})
	m.readiness = &readinessCollector{
		redis: prometheus.NewDesc("waitingroom_redis_up", "1 when Redis answers, as the readiness check (/readyz) sees it at scrape time.", nil, nil),
		db:    prometheus.NewDesc("waitingroom_db_up", "1 when the order database answers and is migrated, as the readiness check (/readyz) sees it at scrape time.", nil, nil),
	}
	m.Registry.MustRegister(m.OrdersPlaced, m.OrdersFailed, m.OrderDuration, m.HTTPResponses,
		m.RoomPaused, m.RoomSoldOut, m.RoomPhase, m.GateChecks, m.readiness)
	m.GateSessions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "waitingroom_gate_sessions", Help: "Live gate sessions of the room in its shop (each holds an active slot), as of the room's last tick (by the instance that ticks it); only rooms that opened one.",
	}, []string{"room"})
	m.GateSessionEvents = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "waitingroom_gate_session_events",
		Help: "Room-wide totals of gate sessions opened (a pass redeemed), ended (by the shop) and idle (past sessionSeconds), as of the room's last tick (by the instance that ticks it).",
	}, []string{"room", "event"})
	m.Registry.MustRegister(m.GateSessions, m.GateSessionEvents)
	m.ChallengesIssued = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "waitingroom_challenges_issued_total", Help: "Proof-of-work challenges issued by this instance, no-JavaScript wait tokens included.",
	})
	m.ChallengesSolved = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "waitingroom_challenges_solved_total", Help: "Enters on this instance that brought a valid proof of work and were let in.",
	})
	m.ChallengesRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "waitingroom_challenges_refused_total",
		Help: "Enters refused for their proof of work on this instance (428, or an HTML page), by reason: asked (no proof: the page's first, bare enter, the normal flow), invalid (including a solution of another visitor's challenge), expired, stale (issued before the room's pre-queue or opening), other_room, other_network (a no-JavaScript wait token brought from another network), used (a replay), early (a no-JavaScript wait token before its time).",
	}, []string{"reason"})
	m.ChallengeDifficulty = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "waitingroom_challenge_max_number", Help: "The maxNumber (the most hashes a solver needs) of the challenges this instance issued.",
		Buckets: prometheus.ExponentialBuckets(5_000, 2, 8), // 5,000 (M0) to 640,000 (past Max)
	})
	m.Registry.MustRegister(m.ChallengesIssued, m.ChallengesSolved, m.ChallengesRefused, m.ChallengeDifficulty)
	m.AccessCodes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "waitingroom_access_codes_total",
		Help: "Access codes brought by joins on this instance, by result: redeemed, or refused as unknown, wrong_room (another room's), used_up, expired, or throttled (the client network's refused codes were spent).",
	}, []string{"result"})
	m.Identities = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "waitingroom_identities_total",
		Help: "Signed identities brought by joins on this instance, by result: verified, or refused as malformed, signature (not the shop's keys), expired, not_yet_valid, wrong_room, no_subject, no_expiry, not_taken (the room takes none), or keys_unavailable (the shop's key set could not be had).",
	}, []string{"result"})
	m.Bypasses = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "waitingroom_bypasses_total",
		Help: "Passes let in outside the line on this instance, by kind: staff (a join from the room's staff networks) or link (a test link); and result: admitted, full (every slot of maxActive held; a staff join then waits in the line), refused (a test link unknown, revoked, expired or used up), ended (the room's sale has ended), failed.",
	}, []string{"kind", "result"})
	m.Registry.MustRegister(m.AccessCodes, m.Identities, m.Bypasses)
	m.AdaptDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "waitingroom_adaptive_decisions_total",
		Help: "Decisions of the adaptive admission controller applied by this instance, by reason: increase, probe (out of rate 0), a cut (cut_latency, cut_queue, cut_errors, cut_health: the room's healthURL says load >= 1), or why the rate held (hold_no_signal, hold_short_line, hold_max, hold_min, hold_pool, hold_paused, hold_settle, hold_drain, hold_near_target) or moved into its bounds (bounds).",
	}, []string{"room", "reason"})
	m.AdaptRate = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "waitingroom_adaptive_rate", Help: "The admission rate the adaptive controller last set in the room, from this instance.",
	}, []string{"room"})
	m.Registry.MustRegister(m.AdaptDecisions, m.AdaptRate)
	m.rooms, m.gauged, m.reasons = map[string]bool{}, map[string]bool{}, map[string]bool{}
	return m
}

// Handler serves the metrics in the Prometheus text format. It belongs on a
// private listener (METRICS_ADDR), never on the public routes.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// CountRedisCommands exports a running count of the commands this process
// has sent to Redis.
func (m *Metrics) CountRedisCommands(sent func() int64) {
	m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "waitingroom_redis_commands_total", Help: "Commands this process has sent to Redis (a script call counts as one).",
	}, func() float64 { return float64(sent()) }))
}

// CountDB exports the order database pool's state.
func (m *Metrics) CountDB(stats func() sql.DBStats) {
	m.Registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "waitingroom_db_connections_in_use", Help: "Order database connections in use.",
		}, func() float64 { return float64(stats().InUse) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "waitingroom_db_connections_open", Help: "Order database connections open.",
		}, func() float64 { return float64(stats().OpenConnections) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "waitingroom_db_wait_total", Help: "Order database connection requests that had to wait.",
		}, func() float64 { return float64(stats().WaitCount) }),
	)
}

// Ticked records one admission tick. A sleeping room's answer carries no
// figures: the room keeps those of its last tick here, and a room that
// has none here (its ticks came to this instance while it slept) shows
// nobody waiting and no pass held, which is what sleeping means.
func (m *Metrics) Ticked(room string, a queue.Admission, took time.Duration, err error) {
	if err == nil && a.Slept {
		m.mu.Lock()
		defer m.mu.Unlock()
		if !m.gauged[room] {
			m.Waiting.WithLabelValues(room).Set(0)
			m.Active.WithLabelValues(room).Set(0)
			m.rooms[room], m.gauged[room] = true, true
		}
		return
	}
	m.TickDuration.Observe(took.Seconds())
	if err != nil {
		m.TickErrors.Inc()
		return
	}
	m.Waiting.WithLabelValues(room).Set(float64(a.Waiting))
	m.Active.WithLabelValues(room).Set(float64(a.Active))
	m.Admitted.WithLabelValues(room).Add(float64(len(a.Visitors)))
	m.Departures.WithLabelValues(room, "leave").Set(float64(a.Departures.Leaves))
	m.Departures.WithLabelValues(room, "abandoned").Set(float64(a.Departures.Abandoned))
	m.Departures.WithLabelValues(room, "expired").Set(float64(a.Departures.Expired))
	if gs := a.Sessions; gs.Opened > 0 {
		m.GateSessions.WithLabelValues(room).Set(float64(gs.Live))
		m.GateSessionEvents.WithLabelValues(room, "opened").Set(float64(gs.Opened))
		m.GateSessionEvents.WithLabelValues(room, "ended").Set(float64(gs.Ended))
		m.GateSessionEvents.WithLabelValues(room, "idle").Set(float64(gs.Idle))
	}
	m.RoomPaused.WithLabelValues(room).Set(flag(a.Paused))
	m.RoomSoldOut.WithLabelValues(room).Set(flag(a.SoldOut))
	for _, ph := range roomPhases {
		m.RoomPhase.WithLabelValues(room, ph).Set(flag(ph == a.Phase))
	}
	m.mu.Lock()
	m.rooms[room] = true
	m.gauged[room] = true
	m.mu.Unlock()
}

// Listed implements issuer.RoomsObserver: the series of every room that
// is no longer listed (it was deleted) are dropped, and so are the tick
// gauges of the rooms that another instance ticks now (mine lacks them),
// so that each room's gauges come from the one instance that ticks it.
func (m *Metrics) Listed(rooms, mine []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.listed = make(map[string]bool, len(rooms))
	for _, r := range rooms {
		m.listed[r] = true
	}
	for r := range m.rooms {
		if !m.listed[r] {
			m.forgetLocked(r)
		}
	}
	if len(m.gauged) == 0 {
		return
	}
	ticks := make(map[string]bool, len(mine))
	for _, r := range mine {
		ticks[r] = true
	}
	for r := range m.gauged {
		if !ticks[r] {
			m.dropGaugesLocked(r)
		}
	}
}

// dropGaugesLocked drops room's tick gauges; its counters stay.
func (m *Metrics) dropGaugesLocked(room string) {
	delete(m.gauged, room)
	only := prometheus.Labels{"room": room}
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{
		m.Waiting, m.Active, m.Departures, m.RoomPaused, m.RoomSoldOut, m.RoomPhase, m.GateSessions, m.GateSessionEvents,
	} {
		v.DeletePartialMatch(only)
	}
}

// forgetLocked drops every series labelled with room.
func (m *Metrics) forgetLocked(room string) {
	delete(m.rooms, room)
	delete(m.gauged, room)
	only := prometheus.Labels{"room": room}
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{
		m.Waiting, m.Active, m.Admitted, m.Departures, m.OrdersPlaced, m.OrdersFailed, m.OrderDuration,
		m.RoomPaused, m.RoomSoldOut, m.RoomPhase, m.GateSessions, m.GateSessionEvents, m.AdaptDecisions, m.AdaptRate,
	} {
		v.DeletePartialMatch(only)
	}
}

// ObserveOrder records one order attempt of room that took took: reason
// is OrderPlaced or why it failed (salelog.Reason's codes). It implements
// salelog's OrderObserver.
func (m *Metrics) ObserveOrder(roomName, reason string, took time.Duration) {
	m.mu.Lock()
	switch {
	case m.listed != nil && !m.listed[roomName], m.listed == nil && !room.ValidName(roomName):
		roomName = unlistedRoom
	default:
		m.rooms[roomName] = true
	}
	if reason != OrderPlaced && !m.reasons[reason] {
		if len(m.reasons) < maxReasons && validReason(reason) {
			m.reasons[reason] = true
		} else {
			reason = "other"
		}
	}
	// The series are made while the room is known listed: a Listed that
	// forgets it cannot come between, and leave them behind.
	duration := m.OrderDuration.WithLabelValues(roomName)
	var count prometheus.Counter
	if reason == OrderPlaced {
		count = m.OrdersPlaced.WithLabelValues(roomName)
	} else {
		count = m.OrdersFailed.WithLabelValues(roomName, reason)
	}
	m.mu.Unlock()
	duration.Observe(took.Seconds())
	count.Inc()
}

// Adapted records one decision of the adaptive controller in room (it
// implements adapt.Observer): reason is one of adapt.Reasons, to the rate
// it set.
func (m *Metrics) Adapted(roomName, reason string, _, to float64) {
	m.mu.Lock()
	if m.listed != nil && !m.listed[roomName] || !room.ValidName(roomName) || !validReason(reason) {
		m.mu.Unlock()
		return
	}
	m.rooms[roomName] = true
	count, rate := m.AdaptDecisions.WithLabelValues(roomName, reason), m.AdaptRate.WithLabelValues(roomName)
	m.mu.Unlock()
	count.Inc()
	rate.Set(to)
}

// validReason reports whether reason looks like an error code:
// [a-z0-9_]{1,32}.
func validReason(reason string) bool {
	if len(reason) == 0 || len(reason) > 32 {
		return false
	}
	for i := 0; i < len(reason); i++ {
		c := reason[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// WatchReadiness makes waitingroom_redis_up and waitingroom_db_up report
// check's verdicts at each scrape. A check that does not report the
// database leaves waitingroom_db_up out.
func (m *Metrics) WatchReadiness(check func(ctx context.Context) roomsync.Report) {
	m.readiness.check.Store(&check)
}

// readinessTimeout bounds the readiness check of one scrape.
const readinessTimeout = 5 * time.Second

// readinessCollector runs the readiness check when it is scraped.
type readinessCollector struct {
	check     atomic.Pointer[func(ctx context.Context) roomsync.Report]
	redis, db *prometheus.Desc
}

func (c *readinessCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.redis
	ch <- c.db
}

func (c *readinessCollector) Collect(ch chan<- prometheus.Metric) {
	check := c.check.Load()
	if check == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), readinessTimeout)
	defer cancel()
	rep := (*check)(ctx)
	for name, desc := range map[string]*prometheus.Desc{roomsync.CheckRedis: c.redis, roomsync.CheckDatabase: c.db} {
		if v, ok := rep.Checks[name]; ok {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, flag(v == roomsync.OK))
		}
	}
}

// Hub returns the SSE hub's collectors (see sse.Metrics).
func (m *Metrics) Hub() sse.Metrics {
	return sse.Metrics{Connections: m.SSEConnections, Events: m.SSEEvents, SlowDrops: m.SSESlowDrops,
		Corrections: m.SSECorrections, FanoutDuration: m.FanoutDuration}
}
