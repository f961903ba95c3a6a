package k6

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestParseHandOff(t *testing.T) {
	base, _ := url.Parse("http://queue.example/r/sale/pass")
	tests := []struct {
		name, page string
		want       HandOff
		err        string
	}{
		{"the hand-off", `<form method="post" action="https://shop.example/_waitingroom/enter"><input type="hidden" name="pass" value="eyJ.a.b">` +
			`<input type=hidden name=next value="/checkout?x=1&amp;y=2"><button>Continue</button></form>`,
			HandOff{Action: "https://shop.example/_waitingroom/enter", Pass: "eyJ.a.b", Next: "/checkout?x=1&y=2"}, ""},
		{"attributes in any order, another form first", `<form action="/lang"><input name="lang" value="ko"></form>` +
			"<FORM\n action='https://shop.example/_waitingroom/enter' method=post><input value='p.q.r' name='pass'></FORM>",
			HandOff{Action: "https://shop.example/_waitingroom/enter", Pass: "p.q.r"}, ""},
		{"a relative action", `<form action="/_waitingroom/enter"><input name="pass" value="x.y.z"></form>`,
			HandOff{Action: "http://queue.example/_waitingroom/enter", Pass: "x.y.z"}, ""},
		{"no pass value", `<form action="/x"><input name="pass" value=""></form>`, HandOff{}, "no pass"},
		{"an error page", `<p>This pass was already used.</p>`, HandOff{}, "no hand-off form"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHandOff(tt.page, base)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestWaitReadySilentStream: a stream that goes silent without its ready
// event leaves the buyer asking the position API, whose READY answer (a
// long one) lets the buyer go on, marked Polled.
func TestWaitReadySilentStream(t *testing.T) {
	long := strings.Repeat("x", 600)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/rooms/sale/queue", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "wr_vid", Value: "buyer-1", Path: "/"})
		io.WriteString(w, `{"status":"WAITING","ticket":7}`)
	})
	mux.HandleFunc("GET /r/sale/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: position\ndata: {\"status\":\"WAITING\",\"rank\":0}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // admitted, and then nothing
	})
	mux.HandleFunc("GET /api/rooms/sale/queue/position", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("wr_vid"); err != nil || c.Value != "buyer-1" {
			io.WriteString(w, `{"status":"NOT_ENTERED","entryToken":null}`)
			return
		}
		io.WriteString(w, `{"status":"READY","entryToken":"tok-7","passExpiresAt":1700000000000,"padding":"`+long+`"}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := GateBuyer{RoomURL: srv.URL, Room: "sale", Client: NewGateClient(nil), Silence: 200 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if ticket, err := b.Enter(ctx); err != nil || ticket != 7 {
		t.Fatalf("enter: %d %v", ticket, err)
	}
	got, err := b.WaitReady(ctx)
	if err != nil || got != (Ready{Token: "tok-7", PassExpiresAt: 1700000000000, Polled: true}) {
		t.Fatalf("got %+v, %v", got, err)
	}
}
