package sse

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the hub's collectors; the caller registers them.
type Metrics struct {
	// Connections counts the open streams, buyers' and widgets'.
	Connections prometheus.Gauge
	// Events counts the position and ready events written.
	Events prometheus.Counter
	// SlowDrops counts the streams dropped because their socket could
	// not take an event at once.
	SlowDrops prometheus.Counter
	// Corrections counts the position events sent off a page's cadence,
	// before its countdown got ahead of its visitor.
	Corrections prometheus.Counter
	// FanoutDuration observes the time one pass takes to bring a room's
	// streams up to its newest state.
	FanoutDuration prometheus.Observer
}
