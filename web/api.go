package web

import (
	"context"
	"io"
	"mime"
	"net/http"
	"time"

	"waitingroom/server/room"
	"waitingroom/web/console"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

// maxBody caps every request body; larger ones get 413.
const maxBody = 4 << 10

// roomBodyMax bounds a room's settings written by the admin API: its
// identity keys may take room.MaxIdentityKeysLen bytes, up to twice that
// as JSON (each newline as \n), beside the other fields.
const roomBodyMax = 2*room.MaxIdentityKeysLen + 16<<10

// revokeBodyMax bounds a batch revoke: console.MaxRevokeBatch codes of
// up to 128 characters as typed (dashes and spaces included), each
// quoted and separated.
const revokeBodyMax = console.MaxRevokeBatch*(128+3) + maxBody

// api wraps a JSON endpoint: it validates the room name, caps the body
// (maxBody) and bounds the request's Redis work.
func (s *Server) api(next http.HandlerFunc) http.Handler { return s.apiMax(maxBody, next) }

// apiMax is api with a body cap of limit bytes.
func (s *Server) apiMax(limit int64, next http.HandlerFunc) http.Handler {
	return s.apiBounded(limit, requestTimeout, next)
}

// apiEnter is api for the enter, whose Redis work the engine bounds itself
// (queue.EnterWait, the same 5 s): it arms no timer of its own, which would
// cost each enter about 3 µs and 9 allocations.
func (s *Server) apiEnter(next http.HandlerFunc) http.Handler {
	return s.apiBounded(enterBodyMax, 0, next)
}

// apiBounded is api with a body cap of limit bytes, bounding the request's
// Redis work to timeout (none when 0).
func (s *Server) apiBounded(limit int64, timeout time.Duration, next http.HandlerFunc) http.Handler {
	return s.apiTyped(limit, timeout, jsonBody, next)
}

// apiCSV is api with a body cap of limit bytes that takes a text/csv body
// too: a type no other site's form can send without the browser asking
// first, like application/json.
func (s *Server) apiCSV(limit int64, next http.HandlerFunc) http.Handler {
	return s.apiTyped(limit, requestTimeout, func(w http.ResponseWriter, r *http.Request) bool {
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		switch {
		case mt == "text/csv" || mt == "application/json":
			return true
		case r.Method != http.MethodPost || r.ContentLength <= 0:
			return jsonBody(w, r) // no body, or one of unannounced length
		}
		response.WriteError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "Send the body as Content-Type: application/json or text/csv.")
		return false
	}, next)
}

// apiTyped is apiBounded whose body type bodyOK checks.
func (s *Server) apiTyped(limit int64, timeout time.Duration, bodyOK func(http.ResponseWriter, *http.Request) bool, next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Cache-Control"] = noStore
		if !room.ValidName(r.PathValue("room")) {
			response.WriteError(w, http.StatusBadRequest, "bad_room", "Room names are 1 to 64 characters of a-z, 0-9 and '-'.")
			return
		}
		if r.ContentLength > limit {
			response.WriteError(w, http.StatusRequestEntityTooLarge, "body_too_large", "The request body is too large.")
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		if !bodyOK(w, r) {
			return
		}
		if timeout == 0 {
			next(w, r)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		next(w, r.WithContext(ctx))
	})
}

// drainBody reads and discards a body the endpoint does not use, so that an
// oversized one is still refused. It reports false after answering 413.
func drainBody(w http.ResponseWriter, r *http.Request) bool {
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return request.BodyError(w, err)
	}
	return true
}
