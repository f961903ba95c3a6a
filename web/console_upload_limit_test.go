package web

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"waitingroom/web/console"
)

// countingBody counts the bytes read from it.
type countingBody struct {
	r    io.Reader
	read int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += int64(n)
	return n, err
}

func (c *countingBody) Close() error { return nil }

// TestConsoleUploadNeedsSession: a form with uploads is read beyond
// console.FormBodyMax only for a signed-in session; a request without one is
// refused having read at most about console.FormBodyMax of its body, and the
// CSRF token is still checked.
func TestConsoleUploadNeedsSession(t *testing.T) {
	rc := newRoomsConsole(t)
	u, _ := url.Parse(rc.srv.URL + "/admin/rooms/" + rc.room + "/branding")
	var cookie *http.Cookie
	for _, c := range rc.c.Jar.Cookies(u) {
		if c.Name == console.SessionCookie {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatal("no session cookie")
	}
	const limit = 3 << 20
	tests := []struct {
		name    string
		cookie  bool
		csrf    string
		size    int
		status  int
		maxRead int64 // bytes of the body read, at most
		handled bool
	}{
		{"anonymous, large form", false, "", 2900 << 10, http.StatusRequestEntityTooLarge, console.FormBodyMax + 8<<10, false},
		{"anonymous, small form", false, "", 1 << 10, http.StatusForbidden, console.FormBodyMax, false},
		{"signed in, large form", true, rc.csrf, 2900 << 10, http.StatusNoContent, limit, true},
		{"signed in, no CSRF token", true, "wrong", 2900 << 10, http.StatusForbidden, limit, false},
		{"signed in, beyond the limit", true, rc.csrf, limit + 1<<10, http.StatusRequestEntityTooLarge, limit + 8<<10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var form bytes.Buffer
			mw := multipart.NewWriter(&form)
			mw.WriteField("csrf", tt.csrf)
			fw, _ := mw.CreateFormFile("logo", "logo.png")
			fw.Write(bytes.Repeat([]byte{0x89}, tt.size))
			mw.Close()
			body := &countingBody{r: &form}
			req := httptest.NewRequest("POST", "/admin/rooms/"+rc.room+"/branding", nil)
			req.Body = body
			req.Header.Set("Content-Type", mw.FormDataContentType())
			if tt.cookie {
				req.AddCookie(&http.Cookie{Name: console.SessionCookie, Value: cookie.Value})
			}
			handled := false
			rec := httptest.NewRecorder()
			rc.web.console.ChangeUpTo(limit, func(w http.ResponseWriter, r *http.Request, _ console.Session) {
				handled = true
				w.WriteHeader(http.StatusNoContent)
			}, nil)(rec, req)
			if rec.Code != tt.status || handled != tt.handled {
				t.Errorf("%d, handled %v; want %d, %v", rec.Code, handled, tt.status, tt.handled)
			}
			if body.read > tt.maxRead {
				t.Errorf("read %d bytes of the body, want at most %d", body.read, tt.maxRead)
			}
		})
	}
}
