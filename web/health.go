package web

import (
	"context"
	"net/http"
	"time"

	"waitingroom/web/response"
)

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
