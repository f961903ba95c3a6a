package gatemode

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// The outcomes of the proxy's requests (waitingroom_proxy_requests_total).
const (
	proxyPassed      = "passed"       // an unprotected path, to the origin
	proxyAdmitted    = "admitted"     // a protected path with a live session, to the origin
	proxySentToRoom  = "sent_to_room" // a protected path without one: 303 to the room
	proxyRefused     = "refused"      // the same by another method: 403
	proxyFailOpen    = "fail_open"    // not checked (Redis away), let through
	proxyFailClosed  = "fail_closed"  // not checked, please retry (503)
	proxyOriginError = "origin_error" // the origin failed: 502
	proxyGate        = "gate"         // the gate's own paths (/_waitingroom/)
	proxyBadPath     = "bad_path"     // an ambiguously encoded path: 400
)

// proxyRequests registers the proxy's request counter on reg, or returns
// the one a proxy of this registry registered before.
func proxyRequests(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "waitingroom_proxy_requests_total",
		Help: "Requests on the reverse-proxy listener (PROXY_ADDR) by outcome: passed, admitted, sent_to_room, refused, fail_open, fail_closed, origin_error, gate, bad_path.",
	}, []string{"outcome"})
	if err := reg.Register(c); err != nil {
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) {
			return already.ExistingCollector.(*prometheus.CounterVec)
		}
		panic(err) // a programming error: a clash with another collector
	}
	return c
}
