package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// TestServedMetrics runs the real server: its /metrics reports a paused
// room's state from the issuer's ticks, HTTP answers by route pattern,
// Redis and the database up, and drops the room's series once it is
// deleted.
func TestServedMetrics(t *testing.T) {
	base, eng, rdb := startServer(t, 100*time.Millisecond)
	ctx := context.Background()
	name := servicetest.RoomName(t, rdb)
	s := room.Defaults(name)
	s.Paused = true
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/healthz", "/r/" + name} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	scrape := func() string {
		resp, err := http.Get(metricsURL(base))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	waitFor := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			body := scrape()
			if ok(body) {
				return body
			}
			if time.Now().After(deadline) {
				t.Fatalf("/metrics never showed %s:\n%s", what, grepLines(body, "waitingroom_room_", "waitingroom_http_", "_up "))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, want := range []string{
		`waitingroom_room_paused{room="` + name + `"} 1`,
		`waitingroom_room_sold_out{room="` + name + `"} 0`,
		`waitingroom_room_phase{phase="open",room="` + name + `"} 1`,
		`waitingroom_http_responses_total{code="200",route="GET /healthz"}`,
		`waitingroom_http_responses_total{code="200",route="GET /r/{room}"}`,
		"waitingroom_redis_up 1",
		"waitingroom_db_up 1",
	} {
		body := waitFor(want, func(b string) bool { return strings.Contains(b, want) })
		if strings.Contains(body, `route="/r/`) {
			t.Fatalf("a raw path is a route label:\n%s", grepLines(body, "waitingroom_http_"))
		}
	}
	if _, err := eng.DeleteRoom(ctx, name); err != nil {
		t.Fatal(err)
	}
	waitFor("the deleted room's series gone", func(b string) bool { return !strings.Contains(b, `room="`+name+`"`) })
}

// grepLines returns the lines of text that contain any of subs.
func grepLines(text string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		for _, s := range subs {
			if strings.Contains(l, s) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
