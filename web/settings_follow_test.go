package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"waitingroom/web/sse"
)

// TestEveryInstanceFollowsASettingsChange changes a room through one
// instance and reads it through another on the same Redis: the change
// shows there within one tick (the default tick is a second; the room
// page is cached for pageCacheTTL, a second too).
func TestEveryInstanceFollowsASettingsChange(t *testing.T) {
	const tick = time.Second
	cases := []struct {
		name   string
		change string
		// seen reports whether instance B shows the change.
		seen func(t *testing.T, b string, room string) bool
	}{
		{"title on the room page", `{"title":"After the change"}`, func(t *testing.T, b, room string) bool {
			return strings.Contains(getBody(t, b+"/r/"+room), "After the change")
		}},
		{"closed refuses a join", `{"mode":"closed"}`, func(t *testing.T, b, room string) bool {
			resp, err := http.Post(b+"/api/rooms/"+room+"/queue", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode != http.StatusOK
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := newHarness(t, nil)
			b := startInstance(t, a.rdb, a.eng, a.room, tick, false, sse.Options{})
			if tc.seen(t, b.url, a.room) {
				t.Fatalf("instance B shows the change before it was made")
			}
			changed := time.Now()
			if r := a.do(t, "PUT", "/api/admin/rooms/"+a.room, tc.change, map[string]string{"Authorization": "Bearer " + testAdminToken}, nil); r.status != http.StatusOK {
				t.Fatalf("PUT through instance A: %d %s", r.status, r.body)
			}
			for !tc.seen(t, b.url, a.room) {
				if time.Since(changed) > tick+pageCacheTTL/2 {
					t.Fatalf("instance B did not follow the change within one tick")
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("instance B followed in %v", time.Since(changed).Round(time.Millisecond))
		})
	}
}

func getBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
