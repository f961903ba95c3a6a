package web

import (
	"errors"
	"net/http"

	"waitingroom/server/room"
	"waitingroom/views"
)

// postedRoomForm starts a handler of a form posted to a room's page
// (/r/{room}/…): the room's name and its words, with the body read (at
// most maxBody). A bad room name or body is answered here, a malformed
// body with bad's words (a body over the limit says so), and ok is false.
func (s *Server) postedRoomForm(w http.ResponseWriter, r *http.Request, bad func(views.Messages) string) (name string, t views.Messages, ok bool) {
	name = r.PathValue("room")
	t = s.roomText(r, roomOfPath(r.URL.Path))
	if !room.ValidName(name) {
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusBadRequest, Heading: t.TitleNotFound, Message: t.BadRoomName})
		return name, t, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if err := r.ParseForm(); err != nil {
		status, msg := formStatus(err), t.FormTooLarge
		if status != http.StatusRequestEntityTooLarge {
			msg = bad(t)
		}
		s.htmlError(w, r, status, msg, name, false)
		return name, t, false
	}
	return name, t, true
}

// formStatus is the status of a form body that did not parse: 413 when
// it was over its limit (http.MaxBytesReader), else 400, malformed.
func formStatus(err error) int {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}
