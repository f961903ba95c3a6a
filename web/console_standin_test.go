package web

// STAND-IN for H1's signIn test helper (see console_standin.go).

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func signIn(t *testing.T, srv *httptest.Server, token string) (*http.Client, string) {
	t.Helper()
	return &http.Client{Transport: bearer{token, http.DefaultTransport},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, "x"
}
