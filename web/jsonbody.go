package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"unicode/utf8"
)

// decodeStrict reads exactly one JSON object from the request body into v:
// the body must be valid UTF-8 (encoding/json would quietly replace bad
// bytes), name no unknown field, and hold nothing after the object. It
// answers 400 (or 413) itself and reports false when the body is refused.
func decodeStrict(w http.ResponseWriter, r *http.Request, v any, shape string) bool {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		writeBodyError(w, err)
		return false
	}
	if !utf8.Valid(b) {
		writeError(w, http.StatusBadRequest, "bad_json", "The body must be valid UTF-8.")
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "bad_json", "The body must be "+shape+": "+err.Error())
		return false
	}
	if err := dec.Decode(&json.RawMessage{}); !errors.Is(err, io.EOF) {
		writeError(w, http.StatusBadRequest, "bad_json", "The body must hold exactly one JSON object, and nothing after it.")
		return false
	}
	return true
}

// writeBodyError answers a body that could not be read: 413 when it is
// too large, 400 otherwise.
func writeBodyError(w http.ResponseWriter, err error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", "The request body is too large.")
		return
	}
	writeError(w, http.StatusBadRequest, "bad_request", "The request body could not be read.")
}
