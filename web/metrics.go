package web

import (
	"database/sql"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"waitingroom/server/queue"
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
	FanoutDuration prometheus.Histogram
	Rejected       *prometheus.CounterVec
	PageRequests   prometheus.Counter
	// Departures are each room's totals of why people left, from Redis.
	Departures *prometheus.GaugeVec
}

// NewMetrics returns the collectors, registered with the Go and process
// collectors (which give RSS and open files) on a fresh registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Waiting: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "waitingroom_waiting", Help: "Visitors waiting in line, as of this instance's last tick.",
		}, []string{"room"}),
		Active: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "waitingroom_active_slots", Help: "Admitted sessions holding a slot, as of this instance's last tick.",
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
		FanoutDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "waitingroom_sse_fanout_duration_seconds", Help: "Time to push one tick to every local connection of a room.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
		PageRequests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "waitingroom_page_requests_total", Help: "Room page requests that reached this instance (an edge cache absorbs the rest).",
		}),
		Rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "waitingroom_rejected_total", Help: "Requests refused (or idle connections closed) by a per-client cap or the cross-site guard.",
		}, []string{"cap"}),
	}
	m.Registry.MustRegister(m.Waiting, m.Active, m.Admitted, m.EnterDuration, m.TickDuration, m.TickErrors,
		m.SSEConnections, m.SSEEvents, m.SSESlowDrops, m.FanoutDuration, m.Rejected, m.PageRequests,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.Departures = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "waitingroom_departures",
		Help: "Room-wide totals as of this instance's last tick: visitors who left the line (reason leave or abandoned) and passes that expired unused (expired).",
	}, []string{"room", "reason"})
	m.Registry.MustRegister(m.Departures)
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

// Ticked records one admission tick.
func (m *Metrics) Ticked(room string, a queue.Admission, took time.Duration, err error) {
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
}
