package web

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"

	"waitingroom/server/visitor"
)

// TestVisitorCookieLine: the hand-written Set-Cookie line of
// setVisitorCookie is the one net/http writes for visitorCookie.
func TestVisitorCookieLine(t *testing.T) {
	signer, err := visitor.NewSigner([]byte("0123456789abcdef0123"))
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{signer: signer}
	id, err := visitor.NewID()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		req  func() *http.Request
	}{
		{"plain", func() *http.Request { return httptest.NewRequest("POST", "/api/rooms/demo/queue", nil) }},
		{"TLS", func() *http.Request {
			r := httptest.NewRequest("POST", "/api/rooms/demo/queue", nil)
			r.TLS = &tls.ConnectionState{}
			return r
		}},
		{"behind a TLS proxy", func() *http.Request {
			r := httptest.NewRequest("POST", "/api/rooms/demo/queue", nil)
			r.Header.Set("X-Forwarded-Proto", "https")
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.req()
			fast, slow := httptest.NewRecorder(), httptest.NewRecorder()
			fast.Header().Add("Set-Cookie", "other=1")
			slow.Header().Add("Set-Cookie", "other=1")
			s.setVisitorCookie(fast, r, id)
			http.SetCookie(slow, s.visitorCookie(r, id))
			got, want := fast.Header().Values("Set-Cookie"), slow.Header().Values("Set-Cookie")
			if len(got) != 2 || len(want) != 2 || got[0] != want[0] || got[1] != want[1] {
				t.Fatalf("Set-Cookie %q, want %q", got, want)
			}
		})
	}
}
