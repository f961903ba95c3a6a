package web

import (
	"net/http"
	"time"

	"waitingroom/web/gatemode"
)

// newGate returns gate mode's handlers over o's passes and sessions.
func (s *Server) newGate(o Options) *gatemode.Gate {
	reports := newIPLimiter(gatemode.ReportsPerRoom, gatemode.ReportsBurst, o.Now)
	return gatemode.New(gatemode.Deps{
		PassKeys:    o.PassKeys,
		Gates:       o.Gates,
		Rooms:       o.Rooms,
		Recorded:    s.recorded,
		Signer:      o.Signer,
		Signal:      o.Signal,
		KeyFails:    gateKeyFails{s: s, fails: newFailures(adminFailures, adminFailWindow)},
		AllowReport: reports.allow,
		Fail:        s.fail,
		Page:        s.htmlPageFrom,
		Text:        messages,
		Origin:      func(r *http.Request) string { origin, _ := s.requestOrigin(r); return origin },
		Client:      s.clientKey,
		Recover:     s.recoverPanics,
		Trusted:     o.TrustedProxies,
		PublicURL:   s.publicURL,
		CSS:         s.assets.url("app.css"),
		Checks:      o.Metrics.GateChecks,
		Rejected:    o.Metrics.Rejected,
		Registry:    o.Metrics.Registry,
		Log:         o.Log,
	})
}

// gateKeyFails throttles wrong room API keys as the admin token's are,
// with a count of their own.
type gateKeyFails struct {
	s     *Server
	fails *failures
}

func (k gateKeyFails) Refuse(w http.ResponseWriter, key, label, msg string) bool {
	return k.s.refuseThrottled(w, k.fails, key, label, msg)
}

func (k gateKeyFails) Fail(key string) { k.fails.fail(key, time.Now()) }

// NewProxy returns the handler of the reverse-proxy listener, over the
// Server's rooms when o names none, its idle connections capped as the
// main listener's.
func (s *Server) NewProxy(o gatemode.ProxyOptions) (*gatemode.Proxy, error) {
	if o.Rooms == nil {
		o.Rooms = s.rooms
	}
	if o.ConnState == nil {
		idle := newIdleConns(s.idle.max, s.v6Prefix, s.trusted, s.metrics.Rejected.WithLabelValues("idle_conns").Inc)
		o.ConnState = idle.connState
	}
	return s.gate.NewProxy(o)
}
