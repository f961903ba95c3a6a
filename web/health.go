package web

import (
	"context"
	"net/http"
	"time"
)

// healthz answers 200 when Redis answers, and 503 otherwise.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.health(ctx); err != nil {
		s.log.Warn("health check failed", "err", err)
		writeError(w, http.StatusServiceUnavailable, "unavailable", "Redis does not answer.")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}
