package web

import (
	"bytes"
	"context"
	"errors"
	"html"
	"image"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
	"waitingroom/web/media"

	"golang.org/x/image/font/sfnt"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/store"
)

// The crawlers that fetch a shared link, by their real user agents.
var crawlerAgents = []struct{ name, ua string }{
	{"KakaoTalk", "facebookexternalhit/1.1; kakaotalk-scrap/1.0; +https://devtalk.kakao.com/t/scrap/33984"},
	{"Facebook", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"},
	{"Slack", "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"},
	{"X", "Twitterbot/1.0"},
	{"Naver", "Mozilla/5.0 (compatible; Yeti/1.1; +https://naver.me/spd)"},
}

// metaContent returns the content of the <meta> whose property or name is
// key, unescaped, and whether there is one.
func metaContent(page, key string) (string, bool) {
	re := regexp.MustCompile(`<meta (?:property|name)="` + regexp.QuoteMeta(key) + `" content="([^"]*)"`)
	m := re.FindStringSubmatch(page)
	if m == nil {
		return "", false
	}
	return html.UnescapeString(m[1]), true
}

// saveBranded gives the harness's room its title and branding.
func saveBranded(t *testing.T, h *harness, edit func(*room.Settings)) {
	t.Helper()
	set, err := h.eng.Room(context.Background(), h.room)
	if err != nil {
		t.Fatal(err)
	}
	edit(&set)
	if err := set.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.SaveRoom(context.Background(), h.room, set); err != nil {
		t.Fatal(err)
	}
}

// TestCrawlersGetTheRoomsPreview: the link-preview crawlers of KakaoTalk,
// Facebook, Slack and X send no Accept-Language. They get the room's
// default language (a Korean shop's preview is Korean), every preview tag
// with absolute URLs, an og:image that answers a 1200×630 PNG, no cookie,
// and no ticket.
func TestCrawlersGetTheRoomsPreview(t *testing.T) {
	t.Parallel()
	opens := time.Date(2030, 12, 1, 11, 0, 0, 0, time.UTC)
	rooms := []struct {
		name       string
		lang       string // the room's defaultLanguage
		title      string
		wantLang   string
		wantLocale string
		wantText   string // on the page, in its language
		wantSite   string
		desc       string
		wantDesc   string
	}{
		{"a Korean shop", "ko", "한정판 스니커즈 발매", "ko", "ko_KR", "줄 서기", "서울 슈즈", "단 하루, 1,000켤레 한정", "단 하루, 1,000켤레 한정"},
		{"an English shop", "en", "Limited drop", "en", "en_US", "Join the line", "Seoul Shoes", "", "Join the line for Limited drop."},
		{"no default language", "", "Limited drop", "en", "en_US", "Join the line", "Seoul Shoes", "", "Join the line for Limited drop."},
	}
	for _, rm := range rooms {
		t.Run(rm.name, func(t *testing.T) {
			h := newHarness(t, nil)
			saveBranded(t, h, func(s *room.Settings) {
				s.Title, s.DefaultLanguage, s.ShopName, s.Description = rm.title, rm.lang, rm.wantSite, rm.desc
				s.OpensAt = &opens
			})
			for _, c := range crawlerAgents {
				hdr := map[string]string{"User-Agent": c.ua}
				r := h.do(t, "GET", "/r/"+h.room, "", hdr, nil)
				if r.status != 200 || r.header.Get("Set-Cookie") != "" {
					t.Fatalf("%s: %d, Set-Cookie %q", c.name, r.status, r.header.Get("Set-Cookie"))
				}
				if !strings.Contains(r.body, `<html lang="`+rm.wantLang+`"`) || !strings.Contains(r.body, rm.wantText) ||
					r.header.Get("Content-Language") != rm.wantLang {
					t.Errorf("%s: the page is not in %s (Content-Language %q)", c.name, rm.wantLang, r.header.Get("Content-Language"))
				}
				if v := r.header.Get("Vary"); !strings.Contains(v, "Accept-Language") {
					t.Errorf("%s: Vary %q", c.name, v)
				}
				want := map[string]string{
					"og:title": rm.title, "og:description": rm.wantDesc, "og:url": h.srv.URL + "/r/" + h.room,
					"og:site_name": rm.wantSite, "og:locale": rm.wantLocale, "og:type": "website",
					"og:image:width": "1200", "og:image:height": "630",
					"twitter:card": "summary_large_image", "twitter:title": rm.title, "twitter:description": rm.wantDesc,
				}
				for k, v := range want {
					if got, ok := metaContent(r.body, k); !ok || got != v {
						t.Errorf("%s: %s = %q, want %q", c.name, k, got, v)
					}
				}
				img, _ := metaContent(r.body, "og:image")
				if tw, _ := metaContent(r.body, "twitter:image"); tw != img {
					t.Errorf("%s: twitter:image %q differs from og:image %q", c.name, tw, img)
				}
				if !strings.HasPrefix(img, h.srv.URL+"/r/"+h.room+"/og/") || !strings.HasSuffix(img, ".png") {
					t.Fatalf("%s: og:image %q is not an absolute URL of the room's image", c.name, img)
				}
				ir := h.do(t, "GET", strings.TrimPrefix(img, h.srv.URL), "", hdr, nil)
				if ir.status != 200 || ir.header.Get("Content-Type") != "image/png" || ir.header.Get("Set-Cookie") != "" ||
					!strings.Contains(ir.header.Get("Cache-Control"), "immutable") {
					t.Fatalf("%s: og:image answered %d %v", c.name, ir.status, ir.header)
				}
				cfg, err := png.DecodeConfig(strings.NewReader(ir.body))
				if err != nil || cfg.Width != 1200 || cfg.Height != 630 {
					t.Fatalf("%s: og:image is %dx%d (%v), want a 1200x630 PNG", c.name, cfg.Width, cfg.Height, err)
				}
			}
			st, err := h.eng.Stats(context.Background(), h.room)
			if err != nil {
				t.Fatal(err)
			}
			if st.Issued != 0 || st.Waiting != 0 {
				t.Fatalf("crawlers took %d tickets; %d wait in the line", st.Issued, st.Waiting)
			}
		})
	}
}

// TestPreviewBot: the crawlers are told from the browsers, the in-app
// browsers of KakaoTalk, Naver and Facebook included.
func TestPreviewBot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ua  string
		bot bool
	}{
		{"facebookexternalhit/1.1; kakaotalk-scrap/1.0; +https://devtalk.kakao.com/t/scrap/33984", true},
		{"Mozilla/5.0 (compatible; Yeti/1.1; +https://naver.me/spd)", true},
		{"Mozilla/5.0 (compatible; Daum/4.1; +http://cs.daum.net/faq/15/4118.html?faqId=28966) Daumoa", true},
		{"WhatsApp/2.23.20.0", true},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", true},
		{"Mozilla/5.0 (Linux; Android 14; SM-S918N) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36 KAKAOTALK 10.8.0", false},
		{"Mozilla/5.0 (Linux; Android 13; SM-A536N) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36 NAVER(inapp; search; 2000; 12.1.10)", false},
		{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/440.0]", false},
		{"Mozilla/5.0 (Linux; Android 12; CUBOT X50) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36", false},
		{"", false},
		{strings.Repeat("x", 2000) + "googlebot", false}, // past the first 1,024 bytes
	} {
		if got := previewBot(tc.ua); got != tc.bot {
			t.Errorf("previewBot(%.80q) = %v, want %v", tc.ua, got, tc.bot)
		}
	}
}

// TestCrawlersNeverTakeAPlace: a crawler that fetches a room's page, its
// status page and its stream (open, or in the pre-queue) gets no cookie
// and takes no place; the stream answers 204, so that it does not retry.
// A browser's stream, the control, does take one.
func TestCrawlersNeverTakeAPlace(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		prequeue bool
	}{{"open", false}, {"pre-queue", true}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			if tc.prequeue {
				saveBranded(t, h, func(s *room.Settings) {
					pre, opens := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
					s.PrequeueAt, s.OpensAt = &pre, &opens
				})
			}
			for _, c := range crawlerAgents {
				for _, get := range []struct {
					method, path string
					status       int
				}{
					{"GET", "/r/" + h.room, 200},
					{"GET", "/r/" + h.room + "/status", 200},
					{"GET", "/r/" + h.room + "/events", http.StatusNoContent},
					{"HEAD", "/r/" + h.room + "/events", 200},
				} {
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second) // a stream that was opened ends
					req, _ := http.NewRequestWithContext(ctx, get.method, h.srv.URL+get.path, nil)
					req.Header.Set("User-Agent", c.ua)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					cancel()
					if resp.StatusCode != get.status || resp.Header.Get("Set-Cookie") != "" {
						t.Errorf("%s %s %s: %d, want %d; Set-Cookie %q", c.name, get.method, get.path, resp.StatusCode, get.status, resp.Header.Get("Set-Cookie"))
					}
				}
			}
			places := func() int64 {
				st, err := h.eng.Stats(context.Background(), h.room)
				if err != nil {
					t.Fatal(err)
				}
				return st.Issued + st.Waiting + st.Prequeued
			}
			if n := places(); n != 0 {
				t.Fatalf("crawlers took places: %d", n)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", h.srv.URL+"/r/"+h.room+"/events", nil)
			req.Header.Set("User-Agent", "Mozilla/5.0 (Linux; Android 14; SM-S918N) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36 KAKAOTALK 10.8.0")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Set-Cookie") == "" || places() == 0 {
				t.Errorf("a browser's stream: %d, Set-Cookie %q, %d places", resp.StatusCode, resp.Header.Get("Set-Cookie"), places())
			}
		})
	}
}

// TestRoomLanguageNegotiation: the request's language wins; a request
// that names neither Korean nor English gets the room's default, on the
// room page, the status page and the room's error pages.
func TestRoomLanguageNegotiation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	saveBranded(t, h, func(s *room.Settings) { s.DefaultLanguage = "ko" })
	tests := []struct {
		name, path, accept, want string
		status                   int
	}{
		{"room page, no header", "/r/" + h.room, "", "ko", 200},
		{"room page, French", "/r/" + h.room, "fr-FR,fr;q=0.9", "ko", 200},
		{"room page, English asked", "/r/" + h.room, "en-US,en;q=0.8", "en", 200},
		{"room page, Korean asked", "/r/" + h.room, "ko", "ko", 200},
		{"status page, no header", "/r/" + h.room + "/status", "", "ko", 200},
		{"status page, English asked", "/r/" + h.room + "/status", "en", "en", 200},
		{"unknown order, no header", "/r/" + h.room + "/orders/1", "", "ko", 404},
		{"unknown room, no header", "/r/no-such-room-preview", "", "en", 404},
	}
	for _, tt := range tests {
		r := h.do(t, "GET", tt.path, "", map[string]string{"Accept-Language": tt.accept}, nil)
		if r.status != tt.status || !strings.Contains(r.body, `<html lang="`+tt.want+`"`) {
			t.Errorf("%s: %d, want %d in %s:\n%.300s", tt.name, r.status, tt.status, tt.want, r.body)
		}
	}
	// A refused cross-site join, in the room's language too.
	r := h.do(t, "POST", "/r/"+h.room+"/join", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, nil)
	if r.status != 403 || !strings.Contains(r.body, `<html lang="ko"`) || r.header.Get("Set-Cookie") != "" {
		t.Errorf("cross-site join: %d, not in Korean or with a cookie", r.status)
	}
}

// TestPreviewTagsEscapeHostileText: a title, description and shop name
// that try to break out of the attribute stay text.
func TestPreviewTagsEscapeHostileText(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	hostile := `"><script>alert(1)</script><meta property="og:image" content="https://evil.example/x.png`
	saveBranded(t, h, func(s *room.Settings) { s.Title, s.Description, s.ShopName = hostile, hostile, `Shop "><b>x</b>` })
	r := h.do(t, "GET", "/r/"+h.room, "", nil, nil)
	if strings.Contains(r.body, "<script>alert") || strings.Contains(r.body, `content="https://evil.example`) {
		t.Fatalf("the hostile text broke out of the tags:\n%s", r.body)
	}
	for _, k := range []string{"og:title", "og:description", "twitter:title"} {
		if got, _ := metaContent(r.body, k); got != hostile {
			t.Errorf("%s = %q, want the text itself", k, got)
		}
	}
	if img, _ := metaContent(r.body, "og:image"); !strings.HasPrefix(img, h.srv.URL+"/") {
		t.Errorf("og:image %q", img)
	}
}

// TestPreviewBaseURL: PUBLIC_URL makes every absolute URL; without it
// a trusted request's host does (TestRequestOrigin), over https only when
// a trusted proxy says so, and each host gets its own page.
func TestPreviewBaseURL(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	p := newHarness(t, func(o *Options) { o.PublicURL = "https://queue.shop.example" })
	tests := []struct {
		name string
		h    *harness
		hdr  map[string]string
		want string
	}{
		{"PUBLIC_URL", p, nil, "https://queue.shop.example"},
		{"PUBLIC_URL beats the host", p, map[string]string{"X-Forwarded-Proto": "http"}, "https://queue.shop.example"},
		{"the request's host", h, nil, h.srv.URL},
		{"an untrusted proxy's word", h, map[string]string{"X-Forwarded-Proto": "https"}, h.srv.URL},
	}
	for _, tt := range tests {
		r := tt.h.do(t, "GET", "/r/"+tt.h.room, "", tt.hdr, nil)
		if got, _ := metaContent(r.body, "og:url"); got != tt.want+"/r/"+tt.h.room {
			t.Errorf("%s: og:url %q, want under %s", tt.name, got, tt.want)
		}
		if got, _ := metaContent(r.body, "og:image"); !strings.HasPrefix(got, tt.want+"/r/") {
			t.Errorf("%s: og:image %q, want under %s", tt.name, got, tt.want)
		}
	}
	// Without PUBLIC_URL, each trusted host gets its own page: one host's
	// URLs are never served to another.
	for _, host := range []string{"localhost:8443", strings.TrimPrefix(h.srv.URL, "http://")} {
		req, _ := http.NewRequest("GET", h.srv.URL+"/r/"+h.room, nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got, _ := metaContent(string(b), "og:url"); got != "http://"+host+"/r/"+h.room {
			t.Errorf("Host %s: og:url %q", host, got)
		}
	}
	trusted := newHarness(t, func(o *Options) { o.TrustedProxies = loopbackProxy })
	r := trusted.do(t, "GET", "/r/"+trusted.room, "", map[string]string{"X-Forwarded-Proto": "https"}, nil)
	if got, _ := metaContent(r.body, "og:url"); got != "https://"+strings.TrimPrefix(trusted.srv.URL, "http://")+"/r/"+trusted.room {
		t.Errorf("behind a trusted TLS proxy: og:url %q", got)
	}
}

// TestOGFontMustExist: an OG_FONT that names no font file stops the
// server at start, naming the variable.
func TestOGFontMustExist(t *testing.T) {
	t.Parallel()
	var opts Options
	newHarness(t, func(o *Options) { opts = *o })
	for _, p := range []string{"/no/such/font.ttc", t.TempDir()} {
		o := opts
		o.OGFont, o.Metrics = p, NewMetrics()
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), "OG_FONT") {
			t.Errorf("OG_FONT=%s: %v, want an error naming OG_FONT", p, err)
		}
	}
}

// TestUploadedOGImage: a room's uploaded image is the preview's, under
// the site's absolute URL, with its size from the image store when the
// store holds it, and without one when it does not.
func TestUploadedOGImage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	stored := store.Image{SHA256: strings.Repeat("cd", 32), ContentType: "image/png", Width: 1200, Height: 630, Data: []byte("x")}
	h.web.images = media.New(fakeImages{stored.SHA256: stored})
	for _, tt := range []struct {
		name          string
		path          string
		width, height string
	}{
		{"stored", room.MediaPath(stored.SHA256, "png"), "1200", "630"},
		{"not in the store", room.MediaPath(strings.Repeat("ab", 32), "png"), "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			saveBranded(t, h, func(s *room.Settings) { s.OGImage = tt.path })
			h.web.pages.mu.Lock()
			clear(h.web.pages.pages)
			h.web.pages.mu.Unlock()
			r := h.do(t, "GET", "/r/"+h.room, "", nil, nil)
			if got, _ := metaContent(r.body, "og:image"); got != h.srv.URL+tt.path {
				t.Errorf("og:image %q, want %q", got, h.srv.URL+tt.path)
			}
			w, _ := metaContent(r.body, "og:image:width")
			ht, _ := metaContent(r.body, "og:image:height")
			if w != tt.width || ht != tt.height {
				t.Errorf("og:image size %q×%q, want %q×%q", w, ht, tt.width, tt.height)
			}
		})
	}
}

// fakeImages is an image store in memory.
type fakeImages map[string]store.Image

func (f fakeImages) PutImage(_ context.Context, img store.Image) error {
	f[img.SHA256] = img
	return nil
}
func (f fakeImages) Image(_ context.Context, sum string) (store.Image, error) {
	if img, ok := f[sum]; ok {
		return img, nil
	}
	return store.Image{}, store.ErrNoImage
}

// TestOGImageRoute: an outdated fingerprint is sent to the current image;
// a malformed one, or an unknown room, is a 404.
func TestOGImageRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	r := h.do(t, "GET", "/r/"+h.room, "", nil, nil)
	img, _ := metaContent(r.body, "og:image")
	path := strings.TrimPrefix(img, h.srv.URL)
	stale := "/r/" + h.room + "/og/" + strings.Repeat("0", 24) + ".png"
	nofollow := *h.srv.Client()
	nofollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := nofollow.Get(h.srv.URL + stale)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 302 || resp.Header.Get("Location") != path {
		t.Errorf("stale fingerprint: %d to %q, want 302 to %q", resp.StatusCode, resp.Header.Get("Location"), path)
	}
	for _, p := range []string{"/r/" + h.room + "/og/xyz.png", "/r/" + h.room + "/og/" + strings.Repeat("0", 24) + ".gif",
		"/r/no-such-room-og/og/" + strings.Repeat("0", 24) + ".png", "/r/Bad_Room/og/" + strings.Repeat("0", 24) + ".png"} {
		if r := h.do(t, "GET", p, "", nil, nil); r.status != 404 {
			t.Errorf("%s: %d, want 404", p, r.status)
		}
	}
	if r := h.do(t, "GET", path, "", map[string]string{"If-None-Match": `"` + strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], ".png") + `"`}, nil); r.status != 304 {
		t.Errorf("a revalidation: %d, want 304", r.status)
	}
}

// cjkFont returns the system's CJK font, skipping the test without one
// (failing it in CI, which installs fonts-noto-cjk).
func cjkFont(t *testing.T) *ogFont {
	t.Helper()
	p := findFont(cjkFontPaths())
	if p == "" {
		servicetest.Missing(t, "a CJK font (Debian: fonts-noto-cjk)", errors.New("none at the known paths"))
	}
	return newOGFont(p, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// titleArea decodes a drawn card and returns its title lines' pixels.
func titleArea(t *testing.T, b []byte) []byte {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != image.Rect(0, 0, ogWidth, ogHeight) {
		t.Fatalf("image bounds %v", img.Bounds())
	}
	// Right of the accent bar: only text is dark there.
	rgba := image.NewRGBA(image.Rect(ogBar, ogTitleY-ogTitleSize, ogWidth, ogTitleY+ogTitleLine))
	for y := rgba.Rect.Min.Y; y < rgba.Rect.Max.Y; y++ {
		for x := ogBar; x < ogWidth; x++ {
			rgba.Set(x, y, img.At(x, y))
		}
	}
	return rgba.Pix
}

// TestOGImageDrawsHangul: with the CJK font, two Korean titles of the same
// length draw differently (glyphs); with Go's font, which has no Hangul,
// nothing is drawn rather than boxes (tofu), which shows that the
// comparison can tell.
func TestOGImageDrawsHangul(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		font    *ogFont
		inked   bool // the title area has the title's ink
		differs bool // two Hangul titles draw differently
	}{
		{"CJK font", cjkFont(t), true, true},
		// Go's font has no Hangul: the title is left out, not drawn as boxes.
		{"Go's font", newOGFont("", slog.New(slog.NewTextHandler(io.Discard, nil))), false, false},
	}
	for _, tt := range tests {
		a, err := drawOGImage(ogCard{Title: "가나다라", Shop: "서울 슈즈", Accent: "#2456e8"}, tt.font)
		if err != nil {
			t.Fatal(err)
		}
		b, err := drawOGImage(ogCard{Title: "마바사아", Shop: "서울 슈즈", Accent: "#2456e8"}, tt.font)
		if err != nil {
			t.Fatal(err)
		}
		pa, pb := titleArea(t, a), titleArea(t, b)
		inked := 0
		for i := 0; i < len(pa); i += 4 {
			if pa[i] < 0x80 {
				inked++
			}
		}
		if (inked >= 500) != tt.inked {
			t.Errorf("%s: %d dark pixels in the title area, want ink %v", tt.name, inked, tt.inked)
		}
		if differs := !bytes.Equal(pa, pb); differs != tt.differs {
			t.Errorf("%s: different Hangul titles drew different pixels: %v, want %v", tt.name, differs, tt.differs)
		}
	}
}

// TestDrawable: characters the font has no glyph for (emoji in a text
// font) are left out of a preview image's text, never drawn as boxes.
func TestDrawable(t *testing.T) {
	t.Parallel()
	cjk := cjkFont(t).get()
	goFont := newOGFont("", slog.New(slog.NewTextHandler(io.Discard, nil))).get()
	tests := []struct {
		name string
		font *sfnt.Font
		in   string
		want string
	}{
		{"plain", cjk, "Spring drop", "Spring drop"},
		{"Korean", cjk, "12월 한정 발매", "12월 한정 발매"},
		{"emoji", cjk, "🔥 12월 한정 발매 🛍️", "12월 한정 발매"},
		{"emoji between words", cjk, "Air 👟 Runner", "Air Runner"},
		{"Hangul in Go's font", goFont, "Seoul 서울 Lab", "Seoul Lab"},
		{"only emoji", cjk, "🔥🔥", ""},
	}
	for _, tt := range tests {
		if got := drawable(tt.font, tt.in); got != tt.want {
			t.Errorf("%s: drawable(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// TestWrapText: long titles wrap at spaces, break words too long for a
// line, and end in "…" past the last line.
func TestWrapText(t *testing.T) {
	t.Parallel()
	f := newOGFont("", slog.New(slog.NewTextHandler(io.Discard, nil)))
	fc, err := opentypeFace(f, ogTitleSize)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	width := ogWidth - ogBar - 2*ogMargin
	tests := []struct {
		name      string
		in        string
		wantLines int
		wantEll   bool
	}{
		{"short", "Limited drop", 1, false},
		{"two lines", "Limited drop of the winter sneakers", 2, false},
		{"too long", strings.Repeat("Limited drop ", 30), 3, true},
		{"one long word", strings.Repeat("x", 200), 3, true},
		{"empty", "", 0, false},
	}
	for _, tt := range tests {
		lines := wrapText(fc, tt.in, width, ogTitleMax)
		if len(lines) != tt.wantLines {
			t.Errorf("%s: %d lines %q, want %d", tt.name, len(lines), lines, tt.wantLines)
			continue
		}
		for _, l := range lines {
			if !fits(fc, l, width) {
				t.Errorf("%s: line %q is wider than %d", tt.name, l, width)
			}
		}
		if n := len(lines); n > 0 && strings.HasSuffix(lines[n-1], "…") != tt.wantEll {
			t.Errorf("%s: last line %q, ellipsis wanted: %v", tt.name, lines[n-1], tt.wantEll)
		}
	}
}

// stallingImages is an image store that answers only when its context ends,
// or fails at once; it records the deadline it was given.
type stallingImages struct {
	fail     bool
	deadline chan time.Duration
}

func (f stallingImages) PutImage(context.Context, store.Image) error { return errors.New("read only") }
func (f stallingImages) Image(ctx context.Context, _ string) (store.Image, error) {
	d, ok := ctx.Deadline()
	if !ok {
		d = time.Now().Add(time.Hour)
	}
	select {
	case f.deadline <- time.Until(d):
	default:
	}
	if f.fail {
		return store.Image{}, errors.New("database down")
	}
	select {
	case <-ctx.Done():
		return store.Image{}, ctx.Err()
	case <-time.After(10 * time.Second):
		return store.Image{}, errors.New("slow")
	}
}

// TestUploadedOGImageSizeNeverStallsThePage: the uploaded preview image's
// size comes from the order database; a slow or failing one costs the
// shared room page at most imageSizeWait and the size, never the page,
// and the read itself is bounded (media.ReadTimeout).
func TestUploadedOGImageSizeNeverStallsThePage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	path := room.MediaPath(strings.Repeat("cd", 32), "png")
	saveBranded(t, h, func(s *room.Settings) { s.OGImage = path })
	for _, tt := range []struct {
		name  string
		store stallingImages
	}{
		{"slow database", stallingImages{deadline: make(chan time.Duration, 1)}},
		{"failing database", stallingImages{fail: true, deadline: make(chan time.Duration, 1)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h.web.images = media.New(tt.store)
			h.web.pages.mu.Lock()
			clear(h.web.pages.pages)
			h.web.pages.mu.Unlock()
			start := time.Now()
			r := h.do(t, "GET", "/r/"+h.room, "", nil, nil)
			took := time.Since(start)
			// The read itself lasts its whole ReadTimeout (the slow store
			// holds it): a page that answers sooner did not wait for it.
			if r.status != 200 || took >= media.ReadTimeout {
				t.Fatalf("the page answered %d after %v", r.status, took.Round(time.Millisecond))
			}
			if got, _ := metaContent(r.body, "og:image"); got != h.srv.URL+path {
				t.Errorf("og:image %q, want %q", got, h.srv.URL+path)
			}
			if w, ok := metaContent(r.body, "og:image:width"); ok {
				t.Errorf("og:image:width %q without a known size", w)
			}
			select {
			case d := <-tt.store.deadline:
				// The page waits imageSizeWait at most (above); the shared
				// read itself has the media reads' own bound.
				if d > media.ReadTimeout {
					t.Errorf("the lookup had %v, want at most %v", d, media.ReadTimeout)
				}
			default:
				t.Error("the image store was not asked")
			}
		})
	}
}
