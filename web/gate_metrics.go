package web

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"waitingroom/server/queue"
)

// gateStatsTimeout bounds the Redis reads of one scrape of the gate's
// sessions.
const gateStatsTimeout = 3 * time.Second

// gateCollector exports, when scraped, the gate sessions of every room
// that has opened one: live now, and the room's running totals opened,
// ended (by the shop) and idle (past sessionSeconds), from Redis.
type gateCollector struct {
	stats        atomic.Pointer[func(ctx context.Context) map[string]queue.Stats]
	live, events *prometheus.Desc
}

func newGateCollector() *gateCollector {
	return &gateCollector{
		live: prometheus.NewDesc("waitingroom_gate_sessions", "Live gate sessions of the room (each holds an active slot), read from Redis at scrape time.", []string{"room"}, nil),
		events: prometheus.NewDesc("waitingroom_gate_session_events", "Room-wide totals of gate sessions opened (a pass redeemed), ended (by the shop) and idle (past sessionSeconds), read from Redis at scrape time.",
			[]string{"room", "event"}, nil),
	}
}

func (c *gateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.live
	ch <- c.events
}

func (c *gateCollector) Collect(ch chan<- prometheus.Metric) {
	read := c.stats.Load()
	if read == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), gateStatsTimeout)
	defer cancel()
	for name, st := range (*read)(ctx) {
		ch <- prometheus.MustNewConstMetric(c.live, prometheus.GaugeValue, float64(st.Sessions), name)
		for _, e := range []struct {
			event string
			n     int64
		}{{"opened", st.SessionsOpened}, {"ended", st.SessionsEnded}, {"idle", st.SessionsIdle}} {
			ch <- prometheus.MustNewConstMetric(c.events, prometheus.GaugeValue, float64(e.n), name, e.event)
		}
	}
}

// WatchGates makes the metrics export the gate sessions that stats reads
// (by room) at each scrape.
func (m *Metrics) WatchGates(stats func(ctx context.Context) map[string]queue.Stats) {
	m.gates.stats.Store(&stats)
}

// gateStats reads the stats of the live rooms that have opened a gate
// session: one read per room, within ctx.
func (s *Server) gateStats(ctx context.Context) map[string]queue.Stats {
	names, err := s.rooms.Rooms(ctx)
	if err != nil {
		return nil
	}
	out := map[string]queue.Stats{}
	for _, name := range names {
		st, err := s.rooms.Stats(ctx, name)
		if err != nil {
			break // Redis is away: waitingroom_redis_up says so
		}
		if st.SessionsOpened > 0 {
			out[name] = st
		}
	}
	return out
}
