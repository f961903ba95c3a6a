package web

import (
	"net/http"

	"waitingroom/web/request"
)

// clientKey returns the client network of a request, which every per-client
// cap counts as one client.
func (s *Server) clientKey(r *http.Request) string {
	return request.ClientNet(request.ClientIP(r, s.trusted), s.v6Prefix)
}
