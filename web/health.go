package web

import (
	"context"
	"net/http"
	"strings"
	"time"

	"waitingroom/server/roomsync"
	"waitingroom/web/response"
)

// The operations probes: /healthz (liveness) and /readyz (readiness).

// healthz answers 200 when Redis answers, and 503 otherwise.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.health(ctx); err != nil {
		s.log.Warn("health check failed", "err", err)
		response.WriteError(w, http.StatusServiceUnavailable, "unavailable", "Redis does not answer.")
		return
	}
	response.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when this instance can serve a sale: Redis and the
// database answer, and Redis still holds its data (its marker key). When
// Redis lost its data, the check restores the rooms from the database
// first. Otherwise it answers 503 naming the failing parts. /healthz stays
// the liveness probe.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	rep := s.readiness(ctx)
	if rep.Ready {
		response.WriteJSON(w, http.StatusOK, map[string]any{"status": "ready", "checks": rep.Checks})
		return
	}
	failing := rep.Failing()
	parts := make([]string, len(failing))
	for i, f := range failing {
		parts[i] = f + " " + rep.Checks[f]
	}
	w.Header().Set("Retry-After", "2")
	response.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{
		"error":   "not_ready",
		"message": "Not ready: " + strings.Join(parts, ", ") + ".",
		"failing": failing,
		"checks":  rep.Checks,
	})
}

// readiness runs the readiness check: Options.Ready's, or Health's
// verdict on Redis alone. /readyz and the metrics' up gauges share it.
func (s *Server) readiness(ctx context.Context) roomsync.Report {
	if s.ready != nil {
		return s.ready.Check(ctx)
	}
	rep := roomsync.Report{Ready: true, Checks: map[string]string{roomsync.CheckRedis: roomsync.OK}}
	if err := s.health(ctx); err != nil {
		rep.Ready, rep.Checks[roomsync.CheckRedis] = false, roomsync.Unreachable
	}
	return rep
}
