package gatemode

import (
	"bufio"
	"net"
	"net/http"
	"time"
)

// deadlineWriter gives every write to the client its own deadline, d from
// now: a long response (a download, a stream) goes on for as long as the
// client reads it, and a client that stops reading is cut after d. A
// plain WriteTimeout would cut every stream at d. A hijacked connection
// (a WebSocket upgrade through the proxy) gets no deadline.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func newDeadlineWriter(w http.ResponseWriter, d time.Duration) *deadlineWriter {
	dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: d}
	dw.extend()
	return dw
}

func (w *deadlineWriter) extend() {
	w.rc.SetWriteDeadline(time.Now().Add(w.d)) // not every writer has deadlines (tests)
}

func (w *deadlineWriter) WriteHeader(code int) {
	w.extend()
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.extend()
	return w.ResponseWriter.Write(b)
}

// FlushError sends what is buffered (ReverseProxy flushes every write).
func (w *deadlineWriter) FlushError() error {
	w.extend()
	return w.rc.Flush()
}

// Flush is FlushError for an http.Flusher.
func (w *deadlineWriter) Flush() { w.FlushError() }

// Hijack hands over the connection with its deadlines cleared.
func (w *deadlineWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := w.rc.Hijack()
	if err == nil {
		c.SetDeadline(time.Time{})
	}
	return c, rw, err
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
