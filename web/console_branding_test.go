package web

import (
	"bytes"
	"context"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"regexp"
	"strings"
	"testing"

	"waitingroom/server/admin"
	"waitingroom/server/room"
	"waitingroom/server/store"
	"waitingroom/views"
	"waitingroom/web/console"
	"waitingroom/web/media"
)

// brandingConsole is a signed-in console whose server keeps images in
// the test PostgreSQL.
func brandingConsole(t *testing.T) *roomsConsole {
	t.Helper()
	return newRoomsConsoleWith(t, func(o *Options) { o.Images = o.RecordedRooms.(*store.DB) })
}

// upload is a file posted in a form field.
type upload struct {
	field, filename, contentType string
	data                         []byte
}

// postBranding posts the branding form of rc's room as a browser does
// (multipart), with the session's CSRF token, in lang.
func (rc *roomsConsole) postBranding(t *testing.T, fields map[string]string, files []upload, lang string) (*http.Response, string) {
	t.Helper()
	return rc.postMultipart(t, "/admin/rooms/"+rc.room+"/branding", fields, files, map[string]string{"Accept-Language": lang})
}

// postMultipart posts a console form with files to path as a browser
// does, with the session's CSRF token unless fields has one, and the
// headers hdr (those empty left out).
func (rc *roomsConsole) postMultipart(t *testing.T, path string, fields map[string]string, files []upload, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if _, ok := fields["csrf"]; !ok {
		mw.WriteField("csrf", rc.csrf)
	}
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+f.field+`"; filename="`+f.filename+`"`)
		h.Set("Content-Type", f.contentType)
		w, _ := mw.CreatePart(h)
		w.Write(f.data)
	}
	mw.Close()
	req, _ := http.NewRequest("POST", rc.srv.URL+path, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for k, v := range hdr {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := rc.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (rc *roomsConsole) settings(t *testing.T) room.Settings {
	t.Helper()
	set, err := rc.eng.Room(context.Background(), rc.room)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestBrandingUploads: an image is checked from its bytes whatever its
// name and declared type, kept by its SHA-256 and served forever; a
// refused one is said next to its field, in the operator's language, and
// saves nothing.
func TestBrandingUploads(t *testing.T) {
	t.Parallel()
	rc := brandingConsole(t)
	pngImg := testImage(t, "png", 40, 20)
	en, ko := views.BrandingTextFor("en").ErrImage, views.BrandingTextFor("ko").ErrImage
	for _, tc := range []struct {
		name string
		up   upload
		lang string
		// refusal is the message expected next to the field; "" saves
		// an image of extension ext and type ct.
		refusal, ext, ct string
	}{
		{"too big", upload{"logo-file", "big.png", "image/png", append(bytes.Clone(pngImg), make([]byte, media.LogoSlot.MaxBytes)...)}, "en", console.ImageRefusal(en, media.LogoSlot, media.RefusedTooLarge), "", ""},
		{"wrong type", upload{"logo-file", "logo.png", "image/png", []byte("%PDF-1.4 not an image")}, "en", en["type"], "", ""},
		{"svg with a script", upload{"logo-file", "logo.svg", "image/svg+xml", []byte(svgWithScript)}, "ko", ko["svg"], "", ""},
		{"truncated", upload{"ogImage-file", "og.png", "image/png", pngImg[:len(pngImg)-20]}, "en", en["corrupt"], "", ""},
		{"bomb", upload{"ogImage-file", "og.png", "image/png", pngClaiming(t, 60000, 60000)}, "ko", console.ImageRefusal(ko, media.OGImageSlot, media.RefusedCanvas), "", ""},
		{"png named .jpg", upload{"logo-file", "logo.jpg", "image/jpeg", pngImg}, "", "", "png", "image/png"},
		{"jpeg", upload{"logo-file", "logo.jpeg", "image/jpeg", testImage(t, "jpeg", 30, 30)}, "", "", "jpg", "image/jpeg"},
		{"gif", upload{"logo-file", "logo.gif", "image/gif", testImage(t, "gif", 30, 30)}, "", "", "gif", "image/gif"},
		{"square preview", upload{"ogImage-file", "og.png", "image/png", testImage(t, "png", 630, 630)}, "ko", ko["shape"], "", ""},
		{"preview card", upload{"ogImage-file", "og.jpg", "image/jpeg", testImage(t, "jpeg", 1200, 630)}, "", "", "jpg", "image/jpeg"},
		{"webp", upload{"logo-file", "logo.webp", "image/webp", testWebP(t)}, "", "", "webp", "image/webp"},
		{"ico favicon", upload{"favicon-file", "favicon.ico", "image/vnd.microsoft.icon", testICO(t, 32)}, "", "", "ico", "image/x-icon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := rc.settings(t)
			field := strings.TrimSuffix(tc.up.field, "-file")
			resp, body := rc.postBranding(t, map[string]string{"description": "typed " + tc.name}, []upload{tc.up}, tc.lang)
			if tc.refusal != "" {
				if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(html.UnescapeString(body), tc.refusal) ||
					!strings.Contains(body, `id="err-`+field+`"`) || !strings.Contains(body, "typed "+tc.name) {
					t.Fatalf("refusal: %d, want 422 with %q at %s and the typed description:\n%s", resp.StatusCode, tc.refusal, field, body)
				}
				if after := rc.settings(t); after.Description != before.Description {
					t.Fatalf("a refused form saved: %+v", after.Branding)
				}
				return
			}
			if resp.StatusCode != http.StatusSeeOther {
				t.Fatalf("save: %d %s", resp.StatusCode, body)
			}
			b := rc.settings(t).Branding
			path := map[string]string{"logo": b.Logo, "ogImage": b.OGImage, "favicon": b.Favicon}[field]
			if !room.ValidMediaPath(path) || !strings.HasSuffix(path, "."+tc.ext) {
				t.Fatalf("%s saved as %q, want a /media/….%s", field, path, tc.ext)
			}
			r := rc.do(t, "GET", path, "", nil, nil)
			if r.status != 200 || r.header.Get("Content-Type") != tc.ct || !bytes.Equal([]byte(r.body), tc.up.data) {
				t.Fatalf("GET %s: %d %q (%d bytes)", path, r.status, r.header.Get("Content-Type"), len(r.body))
			}
		})
	}
}

// TestMediaHeaders: an image is served with its sniffed type, cached
// forever and revalidated by its ETag; an unknown image, or a known one
// under another extension, is an HTML 404 page.
func TestMediaHeaders(t *testing.T) {
	t.Parallel()
	rc := brandingConsole(t)
	data := testImage(t, "png", 10, 10)
	path, err := rc.web.images.Put(context.Background(), "ann", media.LogoSlot, data)
	if err != nil {
		t.Fatal(err)
	}
	r := rc.do(t, "GET", path, "", nil, nil)
	sum := strings.TrimSuffix(strings.TrimPrefix(path, "/media/"), ".png")
	for k, want := range map[string]string{
		"Content-Type": "image/png", "Cache-Control": "public, max-age=31536000, immutable",
		"X-Content-Type-Options": "nosniff", "ETag": `"` + sum + `"`,
	} {
		if got := r.header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if r.status != 200 || r.body != string(data) {
		t.Fatalf("GET %s: %d", path, r.status)
	}
	if r := rc.do(t, "GET", path, "", map[string]string{"If-None-Match": `"` + sum + `"`}, nil); r.status != http.StatusNotModified || r.body != "" {
		t.Fatalf("revalidation: %d %q", r.status, r.body)
	}
	for _, p := range []string{
		"/media/" + strings.Repeat("0", 64) + ".png", // unknown
		"/media/" + sum + ".jpg",                     // another type
		"/media/" + sum,                              // no extension
		"/media/" + sum + ".svg",
		"/media/..%2f..%2fetc%2fpasswd",
	} {
		r := rc.do(t, "GET", p, "", map[string]string{"Accept-Language": "ko"}, nil)
		if r.status != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !strings.Contains(r.body, views.For("ko").NoSuchImage) {
			t.Errorf("GET %s: %d %q, want the HTML 404 page", p, r.status, r.header.Get("Content-Type"))
		}
	}
}

// TestBrandingForm: the page shows every field; a colour without enough
// contrast is refused next to its field in Korean and in English, with
// everything typed kept and nothing saved; a valid form is saved through
// the audited room write.
func TestBrandingForm(t *testing.T) {
	t.Parallel()
	rc := brandingConsole(t)
	status, page := rc.get(t, "/admin/rooms/"+rc.room+"/branding", "en")
	if status != 200 {
		t.Fatalf("GET branding: %d", status)
	}
	for _, name := range []string{"logo-file", "ogImage-file", "favicon-file", "accentColor", "accentColorDark", "description",
		"defaultLanguage", "shopName", "shopURL", "embedOrigins", "embedTarget", "listed", "csrf"} {
		if !strings.Contains(page, `name="`+name+`"`) {
			t.Errorf("the form has no field %s", name)
		}
	}
	for _, p := range []string{"/admin/rooms/" + rc.room, "/admin/rooms/" + rc.room + "/settings"} {
		if _, pg := rc.get(t, p, "en"); !strings.Contains(pg, `/admin/rooms/`+rc.room+`/branding"`) {
			t.Errorf("%s does not link the branding page", p)
		}
	}
	typed := map[string]string{
		"shopName": "Kim's <Shop>", "shopURL": "https://shop.example/", "description": "봄 한정 <b>세일</b>",
		"defaultLanguage": "ko", "embedOrigins": "https://shop.example\nhttps://blog.example", "embedTarget": "_top", "listed": "1",
	}
	for _, tc := range []struct {
		name, lang, field, colour, want string
	}{
		{"light, English", "en", "accentColor", "#ffff00", "In the light scheme, #ffff00 on #f6f7f9 has a contrast of 1."},
		{"light, Korean", "ko", "accentColor", "#ffff00", "밝은 테마에서 #f6f7f9 위의 #ffff00 대비가 1."},
		{"dark, English", "en", "accentColorDark", "#000080", "In the dark scheme, #000080 on #101216"},
		{"dark, Korean", "ko", "accentColorDark", "#000080", "어두운 테마에서 #101216 위의 #000080"},
		{"not a colour", "en", "accentColor", "blue", views.BrandingTextFor("en").ErrColour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := map[string]string{tc.field: tc.colour}
			for k, v := range typed {
				f[k] = v
			}
			resp, body := rc.postBranding(t, f, nil, tc.lang)
			text := html.UnescapeString(body)
			if resp.StatusCode != http.StatusUnprocessableEntity || !regexp.MustCompile(`id="err-`+tc.field+`"[^>]*>[^<]*`+regexp.QuoteMeta(tc.want)).MatchString(text) {
				t.Fatalf("%d, want 422 with %q next to %s:\n%s", resp.StatusCode, tc.want, tc.field, body)
			}
			for _, v := range []string{tc.colour, "Kim's <Shop>", "봄 한정 <b>세일</b>", "https://blog.example"} {
				if !strings.Contains(text, v) {
					t.Errorf("the refused form lost %q", v)
				}
			}
			if strings.Contains(body, "<b>세일") {
				t.Error("the typed description is not escaped")
			}
			if b := rc.settings(t).Branding; b.ShopName != "" || b.AccentColor != "" {
				t.Fatalf("a refused form saved: %+v", b)
			}
		})
	}
	// Fields that room validation refuses, said at the field.
	for _, tc := range []struct{ field, value, lang string }{
		{"shopURL", "javascript:alert(1)", "en"},
		{"embedOrigins", "https://shop.example/path", "ko"},
		{"description", strings.Repeat("x", room.MaxDescriptionLen+1), "en"},
	} {
		f := map[string]string{}
		for k, v := range typed {
			f[k] = v
		}
		f[tc.field] = tc.value
		want, _ := console.BrandingFieldError(views.BrandingTextFor(tc.lang), tc.field)
		resp, body := rc.postBranding(t, f, nil, tc.lang)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(html.UnescapeString(body), want) || !strings.Contains(body, `id="err-`+tc.field+`"`) {
			t.Fatalf("%s %q: %d, want 422 with %q:\n%s", tc.field, tc.value, resp.StatusCode, want, body)
		}
		if b := rc.settings(t).Branding; b.ShopName != "" {
			t.Fatalf("a refused form saved: %+v", b)
		}
	}
	// Every wrong field is said in one answer, not one a submit.
	many := map[string]string{"accentColor": "#ffff00", "description": strings.Repeat("x", room.MaxDescriptionLen+1),
		"defaultLanguage": "xx", "embedOrigins": "https://shop.example/path"}
	resp, body := rc.postBranding(t, many, []upload{{"logo-file", "logo.svg", "image/svg+xml", []byte(svgWithScript)}}, "en")
	if resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("several wrong fields: %d", resp.StatusCode)
	}
	for _, field := range []string{"accentColor", "description", "defaultLanguage", "embedOrigins", "logo"} {
		if !strings.Contains(body, `id="err-`+field+`"`) {
			t.Errorf("several wrong fields: %s is not said", field)
		}
	}
	f := map[string]string{"accentColor": "#1A4FD0", "accentColorDark": "#8fb0ff"}
	for k, v := range typed {
		f[k] = v
	}
	resp, body = rc.postBranding(t, f, nil, "en")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/admin/rooms/"+rc.room+"/branding?saved=1" {
		t.Fatalf("save: %d %s", resp.StatusCode, body)
	}
	set := rc.settings(t)
	want := room.Branding{AccentColor: "#1a4fd0", AccentColorDark: "#8fb0ff", Description: "봄 한정 <b>세일</b>", DefaultLanguage: "ko",
		ShopName: "Kim's <Shop>", EmbedOrigins: []string{"https://shop.example", "https://blog.example"}, EmbedTarget: "_top", Listed: true}
	if set.ShopURL != "https://shop.example/" || !brandingEqual(set.Branding, want) {
		t.Fatalf("saved %+v %q\nwant %+v", set.Branding, set.ShopURL, want)
	}
	es := auditOf(t, rc.harness, rc.room)
	last := es[len(es)-1]
	if last.Action != admin.ActionUpdate || last.Actor == "" || !strings.Contains(last.New, `"accentColor":"#1a4fd0"`) || !strings.Contains(last.Old, `"accentColor":""`) {
		t.Fatalf("audit entry %+v", last)
	}
	if _, page := rc.get(t, "/admin/rooms/"+rc.room+"/branding?saved=1", "ko"); !strings.Contains(page, views.BrandingTextFor("ko").Saved) || !strings.Contains(page, `value="#1a4fd0"`) {
		t.Fatal("the saved page does not say so or show the colour")
	}
	// Removing an image, and a path of an image the server does not hold.
	path, err := rc.web.images.Put(context.Background(), "ann", media.LogoSlot, testImage(t, "png", 8, 8))
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := rc.postBranding(t, map[string]string{"logo": path}, nil, "en"); resp.StatusCode != http.StatusSeeOther || rc.settings(t).Logo != path {
		t.Fatalf("keep a held image: %d %s", resp.StatusCode, body)
	}
	bogus := "/media/" + strings.Repeat("a", 64) + ".png"
	if resp, body := rc.postBranding(t, map[string]string{"logo": bogus}, nil, "en"); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, html.EscapeString(views.BrandingTextFor("en").ErrNoImage)) {
		t.Fatalf("an image not held: %d %s", resp.StatusCode, body)
	}
	if resp, _ := rc.postBranding(t, map[string]string{"logo": path, "remove-logo": "1"}, nil, "en"); resp.StatusCode != http.StatusSeeOther || rc.settings(t).Logo != "" {
		t.Fatalf("remove: %d, logo %q", resp.StatusCode, rc.settings(t).Logo)
	}
	// Without its CSRF token, nothing is saved.
	rc.csrf = "forged"
	if resp, _ := rc.postBranding(t, map[string]string{"shopName": "forged"}, nil, "en"); resp.StatusCode != http.StatusForbidden || rc.settings(t).ShopName == "forged" {
		t.Fatalf("a form without its CSRF token: %d", resp.StatusCode)
	}
}

func brandingEqual(a, b room.Branding) bool {
	return a.AccentColor == b.AccentColor && a.AccentColorDark == b.AccentColorDark && a.Description == b.Description &&
		a.DefaultLanguage == b.DefaultLanguage && a.ShopName == b.ShopName && strings.Join(a.EmbedOrigins, " ") == strings.Join(b.EmbedOrigins, " ") &&
		a.EmbedTarget == b.EmbedTarget && a.Listed == b.Listed && a.Logo == b.Logo && a.OGImage == b.OGImage && a.Favicon == b.Favicon
}

// TestUploadMessages: a refused upload says the slot's limit, a GIF of
// garbage is damaged, only the favicon's input offers icons, and a form
// over the whole limit shows the branding form again with the limits.
func TestUploadMessages(t *testing.T) {
	t.Parallel()
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
		{"whole form over its limit", "en", upload{"ogImage-file", "huge.png", "image/png", make([]byte, console.BrandingBodyMax()+1024)},
			413, "The upload was too large, so nothing was saved and the form shows the saved settings again. Each image has its own limit: logo at most 512 KB, preview image 2048 KB, favicon 256 KB."},
		{"whole form over its limit, ko", "ko", upload{"ogImage-file", "huge.png", "image/png", make([]byte, console.BrandingBodyMax()+1024)},
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
