package web

import (
	"cmp"
	"errors"
	"net/http"

	"waitingroom/server/admin"
	"waitingroom/server/audit"
	"waitingroom/server/bypass"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

// bypassShape is the body of a new test link.
const bypassShape = `a JSON object such as {"uses":5,"expiresAt":"2026-12-24T12:00:00+09:00"}`

// hasLinks answers 404 when test links are off, and the room's error when
// it does not exist.
func (s *Server) hasLinks(w http.ResponseWriter, r *http.Request) bool {
	if s.links == nil {
		response.WriteError(w, http.StatusNotFound, "links_off", "Test links are off on this server.")
		return false
	}
	if _, err := s.rooms.Room(r.Context(), r.PathValue("room")); err != nil {
		s.fail(w, r, err)
		return false
	}
	return true
}

// postBypassLink serves POST /api/admin/rooms/{room}/bypass: a new test
// link, answered once with its address (201); the record keeps no way to
// make the address again.
func (s *Server) postBypassLink(w http.ResponseWriter, r *http.Request) {
	var spec bypass.Spec
	if !s.hasLinks(w, r) || !request.DecodeStrict(w, r, &spec, bypassShape) {
		return
	}
	name := r.PathValue("room")
	m, err := s.links.Make(r.Context(), name, spec)
	if linkSpecFail(w, err) {
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.recordAudit(r.Context(), audit.Entry{Actor: apiActor, Room: name, Action: "bypass.link", Target: m.ID,
		New: admin.CompactJSON(map[string]any{"uses": m.Uses, "expiresAt": m.ExpiresAt})})
	response.WriteJSON(w, http.StatusCreated, map[string]any{"id": m.ID, "uses": m.Uses, "expiresAt": m.ExpiresAt,
		"url": s.linkURL(r, name, m.Token)})
}

// linkURL is the address of a test link: on PUBLIC_URL when it is set,
// else on the origin the operator's request came to (baseURL).
func (s *Server) linkURL(r *http.Request, name, token string) string {
	return cmp.Or(s.publicURL, s.baseURL(r)) + bypassPath(name) + "?" + bypassTokenField + "=" + token
}

// getBypassLinks serves GET /api/admin/rooms/{room}/bypass: the room's
// test links, their uses and ends, never their addresses.
func (s *Server) getBypassLinks(w http.ResponseWriter, r *http.Request) {
	if !s.hasLinks(w, r) {
		return
	}
	links, err := s.links.List(r.Context(), r.PathValue("room"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	response.WriteJSON(w, http.StatusOK, map[string]any{"links": links})
}

// revokeBypassLink serves DELETE /api/admin/rooms/{room}/bypass/{id}: the
// link lets nobody else in; the passes it gave stay.
func (s *Server) revokeBypassLink(w http.ResponseWriter, r *http.Request) {
	if !drainBody(w, r) || !s.hasLinks(w, r) {
		return
	}
	name, id := r.PathValue("room"), r.PathValue("id")
	err := s.links.Revoke(r.Context(), name, id)
	switch {
	case errors.Is(err, bypass.ErrNoLink):
		response.WriteError(w, http.StatusNotFound, "link_not_found", "The room has no such test link.")
		return
	case err != nil:
		s.fail(w, r, err)
		return
	}
	s.recordAudit(r.Context(), audit.Entry{Actor: apiActor, Room: name, Action: "bypass.revoke", Target: id})
	w.WriteHeader(http.StatusNoContent)
}
