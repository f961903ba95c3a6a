package web

import (
	"encoding/json"
	"net/http"
	"testing"

	"waitingroom/server/room"
	"waitingroom/web/response"
)

// TestStreamEntersOnlyFromTheRoomsOwnPages plays another site that points
// an <img> or an EventSource at a room's stream (challenge off): the
// stream makes a place and sets the cookie only for the room's own pages,
// a typed address and clients that are no browser. Another site's request
// is refused with 403 cross_site and no cookie, unless the visitor
// already has a place, which it then only follows. The widget's stream,
// which takes no place, still serves an embed origin.
func TestStreamEntersOnlyFromTheRoomsOwnPages(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.AllowedOrigins = []string{"https://shop.example"} })
	h.setRoom(t, func(s *room.Settings) {
		s.Challenge = room.ChallengeOff
		s.EmbedOrigins = []string{"https://blog.example"}
	})
	own := h.srv.URL + "/r/" + h.room
	open := func(t *testing.T, path string, hdr map[string]string, c *http.Cookie) *http.Response {
		t.Helper()
		resp, _ := openStreamAt(t, h, path, hdr, c)
		return resp
	}
	events := "/r/" + h.room + "/events"
	tests := []struct {
		name   string
		hdr    map[string]string
		enters bool
	}{
		{"the room's page", map[string]string{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Referer": own}, true},
		{"typed in the address bar", map[string]string{"Sec-Fetch-Site": "none"}, true},
		{"no browser at all", nil, true},
		{"old browser, the room's page", map[string]string{"Referer": own}, true},
		{"an ALLOWED_ORIGINS origin", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://shop.example"}, true},
		{"another site's <img>", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}, false},
		{"another site's <img> with its Referer", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "image", "Referer": "https://evil.example/"}, false},
		{"another site's EventSource", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors", "Origin": "https://evil.example"}, false},
		{"a sibling site's EventSource", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "https://shop.evil.example"}, false},
		{"an embed origin's EventSource", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://blog.example"}, false},
		{"old browser, another site's EventSource", map[string]string{"Origin": "https://evil.example"}, false},
		{"old browser, another site's <img>", map[string]string{"Referer": "https://evil.example/page"}, false},
		{"a sandboxed frame", map[string]string{"Origin": "null"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := h.places(t)
			resp := open(t, events, tt.hdr, nil)
			cookie := (&reply{header: resp.Header}).cookie()
			grew := h.places(t) > before
			if grew != tt.enters || (cookie != nil) != tt.enters {
				t.Fatalf("%d: places grew %v, Set-Cookie %v; want both %v", resp.StatusCode, grew, cookie != nil, tt.enters)
			}
			if want := map[bool]int{true: 200, false: 403}[tt.enters]; resp.StatusCode != want {
				t.Fatalf("status %d, want %d", resp.StatusCode, want)
			}
			if !tt.enters {
				var e response.Error
				if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Code != "cross_site" {
					t.Fatalf("refused with %+v (%v), want the JSON error cross_site", e, err)
				}
			}
		})
	}

	t.Run("another site's stream follows a place the visitor has", func(t *testing.T) {
		c := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil).cookie()
		before := h.places(t)
		resp := open(t, events, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, c)
		if resp.StatusCode != 200 || len(resp.Header.Values("Set-Cookie")) != 0 || h.places(t) != before {
			t.Fatalf("%d, Set-Cookie %q, places %d → %d; want 200, no cookie, no new place",
				resp.StatusCode, resp.Header.Values("Set-Cookie"), before, h.places(t))
		}
	})
	t.Run("the widget's stream serves an embed origin", func(t *testing.T) {
		before := h.places(t)
		resp := open(t, "/r/"+h.room+"/widget/events", map[string]string{"Sec-Fetch-Site": "same-origin", "Referer": own + "/widget"}, nil)
		if resp.StatusCode != 200 || len(resp.Header.Values("Set-Cookie")) != 0 || h.places(t) != before {
			t.Fatalf("%d, Set-Cookie %q: want 200 without a cookie or a place", resp.StatusCode, resp.Header.Values("Set-Cookie"))
		}
	})
}
