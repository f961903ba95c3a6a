package web

import (
	"bytes"
	"html"
	"net/http"
	"strings"
	"testing"
	"waitingroom/web/console"
	"waitingroom/web/media"
)

// TestUploadMessages: a refused upload says the slot's limit, a GIF of
// garbage is damaged, only the favicon's input offers icons, and a form
// over the whole limit shows the branding form again with the limits.
func TestUploadMessages(t *testing.T) {
	rc := brandingConsole(t)
	pngImg := testImage(t, "png", 40, 20)
	for _, tc := range []struct {
		name, lang string
		up         upload
		status     int
		want       string
	}{
		{"logo too large, en", "en", upload{"logo-file", "big.png", "image/png", append(bytes.Clone(pngImg), make([]byte, media.LogoSlot.MaxBytes)...)},
			422, "This file is too large for this image: at most 512 KB."},
		{"logo too large, ko", "ko", upload{"logo-file", "big.png", "image/png", append(bytes.Clone(pngImg), make([]byte, media.LogoSlot.MaxBytes)...)},
			422, "최대 512KB까지입니다"},
		{"favicon too large", "en", upload{"favicon-file", "big.png", "image/png", append(bytes.Clone(pngImg), make([]byte, media.FaviconSlot.MaxBytes)...)},
			422, "at most 256 KB."},
		{"logo canvas", "en", upload{"logo-file", "bomb.png", "image/png", pngClaiming(t, 60000, 60000)},
			422, "at most 4096 pixels wide and high, and 8,388,608 pixels in all."},
		{"favicon canvas, ko", "ko", upload{"favicon-file", "big.png", "image/png", pngClaiming(t, 1024, 1024)},
			422, "최대 512픽셀, 전체 262,144픽셀"},
		{"gif header then garbage", "en", upload{"logo-file", "x.gif", "image/gif", []byte("GIF89a\xff\xff\xff\xff\x00\x00\x00this is not a gif")},
			422, "This image is damaged or incomplete."},
		{"whole form over its limit", "en", upload{"ogImage-file", "huge.png", "image/png", make([]byte, console.BrandingBodyMax+1024)},
			413, "The upload was too large, so nothing was saved and the form shows the saved settings again. Each image has its own limit: logo at most 512 KB, preview image 2048 KB, favicon 256 KB."},
		{"whole form over its limit, ko", "ko", upload{"ogImage-file", "huge.png", "image/png", make([]byte, console.BrandingBodyMax+1024)},
			413, "올린 파일이 너무 커서"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := rc.postBranding(t, map[string]string{"description": "typed"}, []upload{tc.up}, tc.lang)
			if resp.StatusCode != tc.status || !strings.Contains(html.UnescapeString(body), tc.want) {
				t.Fatalf("%d, want %d with %q:\n%.4000s", resp.StatusCode, tc.status, tc.want, body)
			}
			if tc.status == http.StatusRequestEntityTooLarge && (!strings.Contains(body, `name="logo-file"`) || !strings.Contains(body, `name="csrf" value="`+rc.csrf+`"`)) {
				t.Fatalf("the form is not shown again:\n%.4000s", body)
			}
		})
	}

	_, page := rc.get(t, "/admin/rooms/"+rc.room+"/branding", "en")
	for _, tc := range []struct {
		field string
		icons bool
	}{{"logo", false}, {"ogImage", false}, {"favicon", true}} {
		i := strings.Index(page, `name="`+tc.field+`-file"`)
		if i < 0 {
			t.Fatalf("no %s input", tc.field)
		}
		end := strings.Index(page[i:], ">")
		input := page[i : i+end]
		if !strings.Contains(input, `accept="image/png,image/jpeg,image/gif,image/webp`) || strings.Contains(input, "image/x-icon") != tc.icons {
			t.Errorf("%s input: %s, icons %v", tc.field, input, tc.icons)
		}
	}
}
