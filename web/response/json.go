// Package response is the one place where errors become HTTP answers: the
// API's JSON error shape, one table from the server's typed errors to a
// status, a stable code and a text in the visitor's language, the entry
// that answers an error as JSON, as the buyer's error page or as the
// console's, and the security headers of the HTML pages.
package response

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"time"
)

// Error is the one error shape of the API: a stable code and a human
// message.
type Error struct {
	Code    string `json:"error"`
	Message string `json:"message"`
}

// WriteJSON answers v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// WriteError answers the API's error shape. A 503 or 429 says when to
// retry: the Retry-After the caller set, or 2 seconds.
func WriteError(w http.ResponseWriter, status int, code, msg string) {
	if (status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests) && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(2))
	}
	WriteJSON(w, status, Error{Code: code, Message: msg})
}

// WriteRateLimited answers a refused enter.
func WriteRateLimited(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "2")
	WriteError(w, http.StatusTooManyRequests, "rate_limited", "Too many attempts from your network. Please wait a moment.")
}

// RetrySeconds is d in whole seconds, rounded up, at least 1: the value of
// a Retry-After header.
func RetrySeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
