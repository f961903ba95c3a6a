package web

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"waitingroom/server/room"
)

// TestFingerprintRoutesSpareRedis: the theme stylesheet and the default
// preview image refuse a malformed file name without reading the room's
// settings, and answer a well-formed unknown one (outdated or made up)
// from a room face read less than a second ago: a flood of made-up names
// costs at most one read per room and second.
func TestFingerprintRoutesSpareRedis(t *testing.T) {
	var rooms *countingRooms
	h := newClockedHarness(t, func(o *Options) {
		rooms = &countingRooms{widgetRoomsStore: o.Rooms}
		o.Rooms = rooms
	})
	saveBranded(t, h, func(s *room.Settings) { s.AccentColor = "#1a4fd0" })
	set, err := h.eng.Room(t.Context(), h.room)
	if err != nil {
		t.Fatal(err)
	}
	theme := themeURL(h.room, set.Branding)
	page := h.do(t, "GET", "/r/"+h.room, "", nil, nil) // reads the settings, and caches the room's face
	img, _ := metaContent(page.body, "og:image")
	ogPath := strings.TrimPrefix(img, h.srv.URL)
	if theme == "" || !strings.Contains(page.body, theme) || !strings.HasPrefix(ogPath, "/r/"+h.room+"/og/") {
		t.Fatalf("the room page links theme %q and image %q", theme, ogPath)
	}
	nofollow := *h.srv.Client()
	nofollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	hex16, hex24 := strings.Repeat("0", 16), strings.Repeat("0", 24)
	tests := []struct {
		name     string
		paths    []string
		status   int
		location string // of a redirect
		maxReads int64
	}{
		{"malformed theme names", []string{"x.css", hex16[:15] + ".css", hex16 + "0.css", strings.Repeat("A", 16) + ".css",
			hex16 + ".js", hex16 + ".css.map", hex16, strings.Repeat("g", 16) + ".css"}, 404, "", 0},
		{"malformed image names", []string{"x.png", hex24[:23] + ".png", hex24 + "0.png", strings.Repeat("A", 24) + ".png",
			hex24 + ".gif", hex24}, 404, "", 0},
		{"made-up theme hashes", nil, 200, "", 1},
		{"made-up image fingerprints", nil, 302, ogPath, 1},
	}
	for i := range 20 {
		tests[2].paths = append(tests[2].paths, fmt.Sprintf("%016x.css", i+1))
		tests[3].paths = append(tests[3].paths, fmt.Sprintf("%024x.png", i+1))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := rooms.reads.Load()
			for _, file := range tt.paths {
				dir := "/theme/"
				if strings.HasSuffix(tt.name, "image names") || strings.HasSuffix(tt.name, "fingerprints") {
					dir = "/og/"
				}
				resp, err := nofollow.Get(h.srv.URL + "/r/" + h.room + dir + file)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tt.status || resp.Header.Get("Location") != tt.location {
					t.Errorf("%s: %d to %q, want %d to %q", file, resp.StatusCode, resp.Header.Get("Location"), tt.status, tt.location)
				}
				if tt.status != 404 && resp.Header.Get("Cache-Control") != "public, max-age=60" {
					t.Errorf("%s: Cache-Control %q, want a short cache", file, resp.Header.Get("Cache-Control"))
				}
			}
			if n := rooms.reads.Load() - before; n > tt.maxReads {
				t.Errorf("%d requests read the room's settings %d times, want at most %d", len(tt.paths), n, tt.maxReads)
			}
		})
	}
	// A face older than a second is read again: an unknown name then gets
	// the current colours.
	saveBranded(t, h, func(s *room.Settings) { s.AccentColor = "#0b57d0" })
	h.clock.Advance(faceFresh)
	r := h.do(t, "GET", "/r/"+h.room+"/theme/"+hex16+".css", "", nil, nil)
	if r.status != 200 || !strings.Contains(r.body, "#0b57d0") {
		t.Errorf("after a change: %d %q, want the current colours", r.status, r.body)
	}
}
