package web

import (
	"errors"
	"net/http"
)

// formStatus is the status of a form body that did not parse: 413 when
// it was over its limit (http.MaxBytesReader), else 400, malformed.
func formStatus(err error) int {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}
