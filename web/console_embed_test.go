package web

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"waitingroom/server/room"
)

// TestConsoleEmbedPage: the snippet to copy (escaped), the room's embed
// settings with a link to edit them, and a preview the page's own CSP
// lets it frame; the dashboard links to it.
func TestConsoleEmbedPage(t *testing.T) {
	t.Parallel()
	rc := newRoomsConsole(t)
	rc.setRoom(t, func(s *room.Settings) {
		s.EmbedOrigins, s.EmbedTarget = []string{"https://shop.example"}, room.EmbedSameTab
	})
	get := func(path, lang string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", rc.srv.URL+path, nil)
		req.Header.Set("Accept-Language", lang)
		resp, err := rc.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, body := get("/admin/rooms/"+rc.room+"/embed", "en")
	if resp.StatusCode != 200 {
		t.Fatalf("embed page: %d\n%s", resp.StatusCode, body)
	}
	base := rc.srv.URL
	for _, want := range []string{
		`&lt;script src=&#34;` + base + `/static/embed.js&#34; data-room=&#34;` + rc.room + `&#34; async&gt;&lt;/script&gt;`,
		"<li>https://shop.example</li>", "in the same tab",
		`href="/admin/rooms/` + rc.room + `/branding"`,
		`<iframe id="embed-preview" src="/r/` + rc.room + `/widget?preview=1" title="Preview of the widget of ` + rc.room + `"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("embed page lacks %s", want)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("embed page CSP %q", csp)
	}
	_, dash := get("/admin/rooms/"+rc.room, "ko")
	if !strings.Contains(dash, `<a id="dash-embed" href="/admin/rooms/`+rc.room+`/embed">퍼가기</a>`) {
		t.Error("the dashboard does not link the embed page")
	}
	if _, settings := get("/admin/rooms/"+rc.room+"/settings", "en"); !strings.Contains(settings, `href="/admin/rooms/`+rc.room+`/embed">Embed</a>`) {
		t.Error("the room settings page does not link the embed page")
	}
	if resp, _ := get("/admin/rooms/no-such-room-e/embed", "en"); resp.StatusCode != 404 {
		t.Errorf("unknown room: %d", resp.StatusCode)
	}
}
