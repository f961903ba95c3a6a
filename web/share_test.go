package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	gzqr "github.com/makiuchi-d/gozxing/qrcode"

	"waitingroom/server/audit"
	"waitingroom/server/operator"
	"waitingroom/server/share"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
	"waitingroom/web/console"
)

// shareConsole is a console on PostgreSQL with share links, signed in.
type shareConsole struct {
	h     *harness
	links *share.Links
	c     *http.Client
	csrf  string
}

func newShareConsole(t *testing.T) *shareConsole {
	t.Helper()
	return newShareConsoleWith(t, nil)
}

// newShareConsoleWith is newShareConsole with mut applied to its options
// last.
func newShareConsoleWith(t *testing.T, mut func(*Options)) *shareConsole {
	t.Helper()
	db := storetest.Migrated(t, store.Postgres)
	ops, err := operator.New(db)
	if err != nil {
		t.Fatal(err)
	}
	var links *share.Links
	h := newHarness(t, func(o *Options) {
		links = share.NewLinks(share.NewStore(db), o.Log)
		o.Operators, o.Audit, o.Shares = ops, audit.New(db), links
		if mut != nil {
			mut(o)
		}
	})
	c, csrf := signIn(t, h.srv, testAdminToken)
	return &shareConsole{h: h, links: links, c: c, csrf: csrf}
}

func (sc *shareConsole) get(t *testing.T, path string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", sc.h.srv.URL+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := sc.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var createdCode = regexp.MustCompile(`/share\?created=([0-9A-Za-z]+)$`)

func TestShareLinks(t *testing.T) {
	sc := newShareConsole(t)
	h, name := sc.h, sc.h.room
	page := "/admin/rooms/" + name + "/share"

	// The builder, in both languages.
	for lang, want := range map[string]string{"en": "Share links of " + name, "ko": name + " 공유 링크"} {
		resp, body := sc.get(t, page, map[string]string{"Accept-Language": lang})
		if resp.StatusCode != 200 || !strings.Contains(body, want) || !strings.Contains(body, `name="utm_content"`) || !strings.Contains(body, `name="utm_term"`) {
			t.Fatalf("%s page: %d %.400s", lang, resp.StatusCode, body)
		}
	}

	// Refused forms: no source, a control character, a value too long.
	for _, f := range []url.Values{
		{"utm_medium": {"social"}},
		{"utm_source": {"kakao"}, "utm_content": {"a\x07b"}},
		{"utm_source": {strings.Repeat("x", 201)}},
	} {
		f.Set("csrf", sc.csrf)
		resp, body := postForm(t, sc.c, h.srv.URL+page, f, nil)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `aria-invalid="true"`) {
			t.Fatalf("refused form %v: %d %.300s", f, resp.StatusCode, body)
		}
	}
	// Without the CSRF token: refused, nothing created.
	if resp, _ := postForm(t, sc.c, h.srv.URL+page, url.Values{"utm_source": {"x"}}, nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("no csrf: %d", resp.StatusCode)
	}

	// Created: redirected with the code, audited, listed.
	f := url.Values{"csrf": {sc.csrf}, "utm_source": {" kakao "}, "utm_medium": {"social"}, "utm_campaign": {"봄 세일"},
		"utm_content": {"banner-top"}, "utm_term": {""}}
	resp, _ := postForm(t, sc.c, h.srv.URL+page, f, nil)
	m := createdCode.FindStringSubmatch(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || m == nil {
		t.Fatalf("create: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	code := m[1]
	if len(code) != share.CodeLen {
		t.Fatalf("code %q", code)
	}
	es := auditOf(t, h, name)
	if last := es[len(es)-1]; last.Action != "share.create" || last.Target != code || last.Actor != "admin" || !strings.Contains(last.New, "utm_content=banner-top") {
		t.Fatalf("audit: %+v", last)
	}
	short := h.srv.URL + "/s/" + code
	_, body := sc.get(t, page+"?created="+code, nil)
	for _, want := range []string{"Link created: " + short, `data-code="` + code + `"`, `href="` + short + `"`,
		"/r/" + name + "?utm_source=kakao&amp;utm_medium=social&amp;utm_campaign=봄 세일&amp;utm_content=banner-top", `download="` + name + "-" + code + `.png"`,
		`<img src="/admin/rooms/` + name + `/share/` + code + `/qr.svg" alt="QR code of link ` + code + `"`} {
		if !strings.Contains(body, want) {
			t.Fatalf("list lacks %q: %.3000s", want, body)
		}
	}

	// Following: 302 to the room with the non-empty UTM values, no
	// cookie, not cached; a GET counts, a HEAD does not.
	want := "/r/" + name + "?utm_campaign=" + url.QueryEscape("봄 세일") + "&utm_content=banner-top&utm_medium=social&utm_source=kakao"
	for _, method := range []string{"GET", "HEAD", "GET"} {
		req, _ := http.NewRequest(method, short, nil)
		resp, err := noRedirects().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want ||
			resp.Header.Get("Cache-Control") != "no-store" || len(resp.Cookies()) != 0 {
			t.Fatalf("%s %s: %d %q %q cookies %v", method, short, resp.StatusCode, resp.Header.Get("Location"), resp.Header.Get("Cache-Control"), resp.Cookies())
		}
	}
	if err := sc.links.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, body := sc.get(t, page, nil); !strings.Contains(body, `<td class="num clicks">2</td>`) {
		t.Fatalf("clicks after two GETs and a HEAD: %.3000s", body)
	}
	// The attribution page links here and shows the campaign's link clicks;
	// so does the dashboard's header.
	if resp, body := sc.get(t, "/admin/attribution?room="+name, nil); resp.StatusCode != 200 ||
		!strings.Contains(body, `href="`+page+`"`) || attributionRow(t, body, "kakao")["link-clicks"] != "2" {
		t.Fatalf("attribution page: %d %.4000s", resp.StatusCode, body)
	}
	for _, p := range []string{"/admin/rooms/" + name, "/admin/rooms/" + name + "/settings"} {
		if _, body := sc.get(t, p, nil); !strings.Contains(body, `href="`+page+`"`) {
			t.Fatalf("%s does not link to the share page: %.2000s", p, body)
		}
	}

	// Unknown and malformed codes: a 404 page in the visitor's language.
	for _, tc := range []struct{ path, lang, want string }{
		{"/s/Zz9Zz9Zz", "ko", "존재하지 않거나 삭제된"},
		{"/s/Zz9Zz9Zz", "en", "does not exist or was removed"},
		{"/s/" + strings.Repeat("a", 17), "en", "does not exist"},
		{"/s/ab%2Fcd%2Fef", "en", "does not exist"},
		{"/s/abc", "en", "does not exist"},
	} {
		req, _ := http.NewRequest("GET", h.srv.URL+tc.path, nil)
		req.Header.Set("Accept-Language", tc.lang)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(b), tc.want) {
			t.Fatalf("%s (%s): %d %s %.300s", tc.path, tc.lang, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}

	// QR codes: the absolute short link, named for download, console only.
	resp, body = sc.get(t, page+"/"+code+"/qr.png?download=1", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" ||
		resp.Header.Get("Content-Disposition") != `attachment; filename="`+name+"-"+code+`.png"` {
		t.Fatalf("qr.png: %d %v", resp.StatusCode, resp.Header)
	}
	if got := decodeQR(t, []byte(body)); got != short {
		t.Fatalf("the PNG reads %q, want %q", got, short)
	}
	resp, body = sc.get(t, page+"/"+code+"/qr.svg", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(body, "<svg") ||
		resp.Header.Get("Content-Disposition") != `inline; filename="`+name+"-"+code+`.svg"` {
		t.Fatalf("qr.svg: %d %v %.100s", resp.StatusCode, resp.Header, body)
	}
	if resp, _ := sc.get(t, "/admin/rooms/other-room/share/"+code+"/qr.png", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("another room's QR: %d", resp.StatusCode)
	}
	if resp, err := noRedirects().Get(h.srv.URL + page + "/" + code + "/qr.png"); err != nil || resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("QR without a session: %v %v", resp, err)
	}

	// The cap on links per room, said plainly.
	for i := range share.MaxPerRoom - 1 {
		if _, err := sc.links.Create(context.Background(), share.Link{Room: name, Source: fmt.Sprint("s", i)}); err != nil {
			t.Fatal(err)
		}
	}
	resp, body = postForm(t, sc.c, h.srv.URL+page, url.Values{"csrf": {sc.csrf}, "utm_source": {"one-more"}}, nil)
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "1000 links, the most it can have") {
		t.Fatalf("over the cap: %d %.300s", resp.StatusCode, body)
	}

	// Deleted: audited, and the short link answers 404.
	resp, _ = postForm(t, sc.c, h.srv.URL+page, url.Values{"csrf": {sc.csrf}, "op": {"delete"}, "code": {code}, "confirm": {"1"}}, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if es := auditOf(t, h, name); es[len(es)-1].Action != "share.delete" || es[len(es)-1].Target != code {
		t.Fatalf("audit: %+v", es[len(es)-1])
	}
	if resp, err := noRedirects().Get(short); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("deleted link: %v %v", resp, err)
	}
}

// failingShares fails every lookup.
type failingShares struct{ console.ShareLinks }

func (failingShares) Follow(context.Context, string, bool) (share.Link, error) {
	return share.Link{}, errors.New("database away")
}

func TestShareLinkLookupFails(t *testing.T) {
	h := newHarness(t, func(o *Options) { o.Shares = failingShares{} })
	req, _ := http.NewRequest("GET", h.srv.URL+"/s/Ab3dE6g9", nil)
	req.Header.Set("Accept-Language", "ko")
	resp, err := noRedirects().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "잠시 후 다시") {
		t.Fatalf("lookup failing: %d %v %.300s", resp.StatusCode, resp.Header, b)
	}
}

// decodeQR reads a QR code PNG back to its text.
func decodeQR(t *testing.T, b []byte) string {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatal(err)
	}
	res, err := gzqr.NewQRCodeReader().Decode(bmp, map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true})
	if err != nil {
		t.Fatal(err)
	}
	return res.GetText()
}
