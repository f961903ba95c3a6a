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
	ops, err := operator.New(db, testOperators)
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
	t.Parallel()
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
	t.Parallel()
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

// TestShareDeleteAsksFirst: deleting a share link takes a confirmation
// that names the link, its clicks and the printed QR codes; without it
// nothing is deleted.
func TestShareDeleteAsksFirst(t *testing.T) {
	t.Parallel()
	sc := newShareConsole(t)
	ctx := context.Background()
	page := "/admin/rooms/" + sc.h.room + "/share"
	l, err := sc.links.Create(ctx, share.Link{Room: sc.h.room, Source: "kakao"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := sc.links.Follow(ctx, l.Code, true); err != nil {
			t.Fatal(err)
		}
	}
	if err := sc.links.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	short := sc.h.srv.URL + "/s/" + l.Code
	if _, body := sc.get(t, page, nil); !strings.Contains(body, `href="`+page+"/"+l.Code+`/delete"`) {
		t.Fatalf("the list does not lead to the confirmation: %.3000s", body)
	}
	cases := []struct {
		name, method, path, lang string
		form                     url.Values
		status                   int
		want                     []string
		deleted                  bool
	}{
		{"confirm page, en", "GET", page + "/" + l.Code + "/delete", "en", nil, 200,
			[]string{"Delete link " + l.Code + "?", "The short link " + short + " has 3 clicks", "QR codes already printed with it stop working", `name="confirm" value="1"`}, false},
		{"confirm page, ko", "GET", page + "/" + l.Code + "/delete", "ko", nil, 200,
			[]string{l.Code + " 링크를 삭제할까요?", "클릭 수는 3회", "이미 인쇄한 QR 코드"}, false},
		{"unknown link", "GET", page + "/Zz9Zz9Zz/delete", "en", nil, 404, []string{"no such link"}, false},
		{"post without confirm asks", "POST", page, "en", url.Values{"op": {"delete"}, "code": {l.Code}}, 200,
			[]string{"Delete link " + l.Code + "?"}, false},
		{"post without csrf", "POST", page, "en", url.Values{"op": {"delete"}, "code": {l.Code}, "confirm": {"1"}, "csrf": {"nope"}}, 403, nil, false},
		{"confirmed", "POST", page, "en", url.Values{"op": {"delete"}, "code": {l.Code}, "confirm": {"1"}}, 303, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var resp *http.Response
			var body string
			hdr := map[string]string{"Accept-Language": tc.lang}
			if tc.method == "GET" {
				resp, body = sc.get(t, tc.path, hdr)
			} else {
				if tc.form.Get("csrf") == "" {
					tc.form.Set("csrf", sc.csrf)
				}
				resp, body = postForm(t, sc.c, sc.h.srv.URL+tc.path, tc.form, hdr)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("%d, want %d: %.500s", resp.StatusCode, tc.status, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Fatalf("lacks %q: %.3000s", w, body)
				}
			}
			ls, err := sc.links.List(ctx, sc.h.room)
			if err != nil {
				t.Fatal(err)
			}
			if gone := len(ls) == 0; gone != tc.deleted {
				t.Fatalf("deleted %v, want %v", gone, tc.deleted)
			}
		})
	}
}

// TestShareListReadable: the list shows UTM values as typed (escaped,
// not percent-encoded) and times in the console's zone, and the rooms list and the branding page link to
// the share page.
func TestShareListReadable(t *testing.T) {
	t.Parallel()
	sc := newShareConsole(t)
	name := sc.h.room
	page := "/admin/rooms/" + name + "/share"
	if _, err := sc.links.Create(context.Background(), share.Link{Room: name, Source: "kakao", Campaign: "봄 세일 <b>&", Term: "50%"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path      string
		want, not []string
	}{
		// Times in the console's zone, as on the orders page (Seoul unless
		// ?tz= says otherwise).
		{page, []string{"?utm_source=kakao&amp;utm_campaign=봄 세일 &lt;b&gt;&amp;&amp;utm_term=50%</code>", "(UTC+09:00)"},
			[]string{"%EB%B4%84", "utm_term=50%25", "<b>&"}},
		{page + "?tz=UTC", []string{"(UTC)"}, []string{"(UTC+09:00)"}},
		{"/admin/rooms", []string{`href="` + page + `"`}, nil},
		{"/admin/rooms/" + name + "/branding", []string{`href="` + page + `"`}, nil},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, body := sc.get(t, tc.path, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("%d", resp.StatusCode)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("lacks %q: %.4000s", w, body)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(body, n) {
					t.Errorf("has %q", n)
				}
			}
		})
	}
}

// TestSharePublicURLWarning: without PUBLIC_URL the share page warns, in
// the operator's language, that its links use the console's address.
func TestSharePublicURLWarning(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, publicURL, lang string
		want, wantNot         string
	}{
		{"unset, en", "", "en", "PUBLIC_URL is not set: these short links and QR codes use the address this console was opened at ({origin})", ""},
		{"unset, ko", "", "ko", "PUBLIC_URL이 설정되지 않았습니다", ""},
		{"set", "https://shop.example", "en", "", `data-warning="public-url"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc := newShareConsoleWith(t, func(o *Options) { o.PublicURL = tc.publicURL })
			page := "/admin/rooms/" + sc.h.room + "/share"
			want := strings.ReplaceAll(tc.want, "{origin}", sc.h.srv.URL)
			resp, body := sc.get(t, page, map[string]string{"Accept-Language": tc.lang})
			if resp.StatusCode != 200 {
				t.Fatalf("%d", resp.StatusCode)
			}
			if want != "" && !strings.Contains(body, want) {
				t.Fatalf("no warning %q: %.3000s", want, body)
			}
			if tc.wantNot != "" && strings.Contains(body, tc.wantNot) {
				t.Fatalf("warns although PUBLIC_URL is set: %.3000s", body)
			}
		})
	}
}

// TestShareBuilderCountedRule: the builder lower-cases utm_source and
// utm_medium and refuses values that joins would count under (other),
// saying why in the operator's language; campaign, content and term stay
// free text.
func TestShareBuilderCountedRule(t *testing.T) {
	t.Parallel()
	sc := newShareConsole(t)
	page := "/admin/rooms/" + sc.h.room + "/share"
	cases := []struct {
		name, lang, source, medium, campaign string
		wantStatus                           int
		wantSource, wantMedium, wantText     string
	}{
		{"capitals folded", "en", " Kakao ", "Social", "Spring Sale", http.StatusSeeOther, "kakao", "social", ""},
		{"no medium", "en", "NAVER", "", "봄 세일", http.StatusSeeOther, "naver", "", ""},
		{"korean source refused", "en", "카카오", "social", "", http.StatusUnprocessableEntity, "", "", "counted under (other): use a short Latin token such as kakao, naver, instagram"},
		{"korean source refused, ko", "ko", "카카오톡", "social", "", http.StatusUnprocessableEntity, "", "", "(other)로 집계됩니다"},
		{"space in medium refused", "en", "kakao", "social media", "", http.StatusUnprocessableEntity, "", "", "counted under (other)"},
		{"source too long for a token", "en", strings.Repeat("a", 65), "", "", http.StatusUnprocessableEntity, "", "", "counted under (other)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := url.Values{"csrf": {sc.csrf}, "utm_source": {tc.source}, "utm_medium": {tc.medium}, "utm_campaign": {tc.campaign}}
			resp, body := postForm(t, sc.c, sc.h.srv.URL+page, f, map[string]string{"Accept-Language": tc.lang})
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("%d, want %d: %.500s", resp.StatusCode, tc.wantStatus, body)
			}
			if tc.wantStatus != http.StatusSeeOther {
				if !strings.Contains(body, tc.wantText) || !strings.Contains(body, `aria-invalid="true"`) {
					t.Fatalf("the page does not say %q: %.3000s", tc.wantText, body)
				}
				return
			}
			m := createdCode.FindStringSubmatch(resp.Header.Get("Location"))
			if m == nil {
				t.Fatalf("location %q", resp.Header.Get("Location"))
			}
			ls, err := sc.links.List(context.Background(), sc.h.room)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range ls {
				if l.Code == m[1] {
					if l.Source != tc.wantSource || l.Medium != tc.wantMedium || l.Campaign != tc.campaign {
						t.Fatalf("saved %q %q %q", l.Source, l.Medium, l.Campaign)
					}
					return
				}
			}
			t.Fatalf("link %s not listed", m[1])
		})
	}
}
