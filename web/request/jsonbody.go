package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"unicode/utf8"

	"waitingroom/web/response"
)

// DecodeStrict reads exactly one JSON object from the request body into v:
// the body must be valid UTF-8 (encoding/json would quietly replace bad
// bytes), name no unknown field, and hold nothing after the object. It
// answers 400 (or 413) itself and reports false when the body is refused;
// shape shows the body expected.
func DecodeStrict(w http.ResponseWriter, r *http.Request, v any, shape string) bool {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return BodyError(w, err)
	}
	if !utf8.Valid(b) {
		response.WriteError(w, http.StatusBadRequest, "bad_json", "The body must be valid UTF-8.")
		return false
	}
	switch err := DecodeJSON(bytes.NewReader(b), v); {
	case errors.Is(err, ErrTrailing):
		response.WriteError(w, http.StatusBadRequest, "bad_json", "The body must hold exactly one JSON object, and nothing after it.")
		return false
	case err != nil:
		response.WriteError(w, http.StatusBadRequest, "bad_json", "The body must be "+shape+": "+err.Error())
		return false
	}
	return true
}

// BodyError answers a body that could not be read: 413 when it was too
// large, 400 otherwise. It returns false, for the callers' convenience.
func BodyError(w http.ResponseWriter, err error) bool {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		response.WriteError(w, http.StatusRequestEntityTooLarge, "body_too_large", "The request body is too large.")
	} else {
		response.WriteError(w, http.StatusBadRequest, "bad_request", "The request body could not be read.")
	}
	return false
}

// ErrTrailing reports bytes after the one JSON value of a body.
var ErrTrailing = errors.New("the body must hold exactly one JSON value")

// DecodeJSON decodes exactly one JSON value of body into v. It refuses
// unknown fields and anything but white space after the value
// (ErrTrailing); a body over the cap yields the *http.MaxBytesError.
func DecodeJSON(body io.Reader, v any) error {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	_, err := dec.Token()
	var tooBig *http.MaxBytesError
	switch {
	case err == io.EOF:
		return nil
	case errors.As(err, &tooBig):
		return err
	}
	return ErrTrailing
}
