package web

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"waitingroom/server/access"
	"waitingroom/server/audit"
	"waitingroom/server/operator"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
	"waitingroom/web/console"
)

// codesConsole is a console on PostgreSQL with access codes, signed in.
type codesConsole struct {
	*shareConsole
	codes *access.Codes
}

func newCodesConsole(t *testing.T) *codesConsole {
	t.Helper()
	db := storetest.Migrated(t, store.Postgres)
	ops, err := operator.New(db, testOperators)
	if err != nil {
		t.Fatal(err)
	}
	key, err := access.NewHasher([]byte("test-secret-key-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	codes := access.New(db.DB, key, time.Now)
	h := newHarness(t, func(o *Options) { o.Operators, o.Audit, o.Codes = ops, audit.New(db), codes })
	c, csrf := signIn(t, h.srv, testAdminToken)
	return &codesConsole{shareConsole: &shareConsole{h: h, c: c, csrf: csrf}, codes: codes}
}

// upload posts the codes page's upload form with file as its CSV (none
// when empty), in lang.
func (cc *codesConsole) upload(t *testing.T, file string, fields url.Values, lang string) (*http.Response, string) {
	t.Helper()
	var b bytes.Buffer
	m := multipart.NewWriter(&b)
	for k, vs := range fields {
		for _, v := range vs {
			m.WriteField(k, v)
		}
	}
	if file != "" {
		fw, _ := m.CreateFormFile("file", "codes.csv")
		io.WriteString(fw, file)
	}
	m.Close()
	req, _ := http.NewRequest("POST", cc.h.srv.URL+"/admin/rooms/"+cc.h.room+"/codes", &b)
	req.Header.Set("Content-Type", m.FormDataContentType())
	req.Header.Set("Accept-Language", lang)
	resp, err := cc.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

var newCodeRe = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}\b`)

// TestConsoleCodes: an operator generates codes and sees them once,
// uploads a CRM's file, reads the counts by line and exports the codes
// by their hints; refused forms say what to fix, in the operator's
// language; every change is audited without the codes.
func TestConsoleCodes(t *testing.T) {
	t.Parallel()
	cc := newCodesConsole(t)
	h, name := cc.h, cc.h.room
	page := "/admin/rooms/" + name + "/codes"
	for lang, want := range map[string]string{"en": "Access codes of " + name, "ko": name + "의 접근 코드"} {
		resp, body := cc.get(t, page, map[string]string{"Accept-Language": lang})
		if resp.StatusCode != 200 || !strings.Contains(body, want) || !strings.Contains(body, `name="count"`) || !strings.Contains(body, `type="file"`) {
			t.Fatalf("%s page: %d %.400s", lang, resp.StatusCode, body)
		}
	}
	if _, body := cc.get(t, "/admin/rooms/"+name, nil); !strings.Contains(body, `href="`+page+`"`) {
		t.Fatal("the dashboard does not link to the codes")
	}
	if _, body := cc.get(t, page+"?tz=America/New_York", nil); !strings.Contains(body, `action="`+page+`?tz=America%2fNew_York"`) &&
		!strings.Contains(body, `action="`+page+`?tz=America%2FNew_York"`) || !strings.Contains(body, "in America/New_York time") {
		t.Fatalf("the page in New York time does not post in it: %.2000s", body)
	}

	// Generated: shown on the answer, once.
	resp, body := postForm(t, cc.c, h.srv.URL+page, url.Values{"csrf": {cc.csrf}, "op": {"generate"}, "count": {"3"}, "uses": {"2"},
		"line": {"presale"}, "expiresAt": {time.Now().Add(48 * time.Hour).Format("2006-01-02T15:04")}}, nil)
	made := newCodeRe.FindAllString(body, -1)
	if resp.StatusCode != 200 || len(made) != 3 || !strings.Contains(body, "New codes: 3.") || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("generate: %d %v %.600s", resp.StatusCode, made, body)
	}
	if g, err := cc.codes.Redeem(context.Background(), name, made[0], "v1"); err != nil || g.Line != "presale" {
		t.Fatalf("a code from the console: %+v %v", g, err)
	}
	if _, body := cc.get(t, page, nil); newCodeRe.MatchString(body) {
		t.Fatal("the page shows a code again")
	}

	// Uploaded, as a spreadsheet saves it (a byte order mark first).
	resp, body = cc.upload(t, "\ufeffcode\nFAN-0001\nfan-0002\nFAN 0001\n", url.Values{"csrf": {cc.csrf}, "op": {"import"}, "uses": {"1"}, "line": {"fans"}}, "en")
	if resp.StatusCode != 200 || !strings.Contains(body, "Added: 2. Skipped: 1") {
		t.Fatalf("upload: %d %.600s", resp.StatusCode, body)
	}
	_, body = cc.get(t, page, nil)
	for _, want := range []string{`data-line="fans"`, `data-line="presale"`, `<td class="num used">1</td>`, "…" + made[2][len(made[2])-3:], page + ".csv"} {
		if !strings.Contains(body, want) {
			t.Fatalf("the page lacks %q: %.3000s", want, body)
		}
	}

	// Refused, in the operator's language, nothing made.
	for _, tc := range []struct {
		name, lang string
		form       url.Values
		file       string
		want       string
	}{
		{"no count", "en", url.Values{"op": {"generate"}, "count": {""}}, "", "Give a whole number from 1 to 10000."},
		{"too many", "en", url.Values{"op": {"generate"}, "count": {"10001"}}, "", "Give a whole number from 1 to 10000."},
		{"no uses", "ko", url.Values{"op": {"generate"}, "count": {"1"}, "uses": {"0"}}, "", "사용 횟수는 1부터 1000000까지의 정수입니다."},
		{"a bad line", "en", url.Values{"op": {"generate"}, "count": {"1"}, "line": {"pre sale"}}, "", "Use up to 32 letters, digits, - and _."},
		{"expired", "en", url.Values{"op": {"generate"}, "count": {"1"}, "expiresAt": {"2020-01-01T00:00"}}, "", "Give a time in the future, or leave it empty."},
		{"no file", "en", url.Values{"op": {"import"}}, "", "Choose a CSV file of codes."},
		{"a bad code, named by its row", "ko", url.Values{"op": {"import"}}, "GOOD-0001\n\n\nno/slash\n", "파일의 4번째 행이"},
		{"not CSV", "en", url.Values{"op": {"import"}}, "\"open\n", "The file does not read as CSV at row 1."},
		{"a header alone", "en", url.Values{"op": {"import"}}, "code\n", "The file holds no code."},
		{"an upload's bad line", "en", url.Values{"op": {"import"}, "line": {"fan club"}}, "GOOD-0002\n", `id="err-line-up"`},
		{"an upload's bad uses", "ko", url.Values{"op": {"import"}, "uses": {"-1"}}, "GOOD-0003\n", `id="err-uses-up"`},
	} {
		tc.form.Set("csrf", cc.csrf)
		hdr := map[string]string{"Accept-Language": tc.lang}
		var resp *http.Response
		var body string
		if tc.form.Get("op") == "import" {
			resp, body = cc.upload(t, tc.file, tc.form, tc.lang)
		} else {
			resp, body = postForm(t, cc.c, h.srv.URL+page, tc.form, hdr)
		}
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d, want 422 saying %q: %.1500s", tc.name, resp.StatusCode, tc.want, body)
		}
	}
	for _, op := range []string{"", "delete"} {
		resp, body := postForm(t, cc.c, h.srv.URL+page, url.Values{"csrf": {cc.csrf}, "op": {op}, "count": {"1"}}, nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Unknown action") {
			t.Errorf("op %q: %d %.300s, want 400, making no code", op, resp.StatusCode, body)
		}
	}
	counts, err := cc.codes.Counts(context.Background(), name)
	if err != nil || len(counts) != 2 || counts[0].Codes+counts[1].Codes != 5 {
		t.Fatalf("refused forms made codes: %+v %v", counts, err)
	}

	// Revoked: the notice names it by its hint; a code the room lacks is
	// refused.
	for _, tc := range []struct {
		code   string
		status int
		want   string
	}{
		{made[1], 200, "Revoked the code …" + made[1][len(made[1])-3:]},
		{made[1], http.StatusUnprocessableEntity, "The room has no such code."},
		{made[0] + "\r\n\n" + strings.ToLower(made[2]) + "\nNOT-OURS-1", 200, "Revoked 2 codes; 1 of those given are not this room"},
		{strings.Repeat("X\n", console.MaxRevokeBatch+1), http.StatusUnprocessableEntity, "Give at most 1000 codes at once."},
	} {
		resp, body := postForm(t, cc.c, h.srv.URL+page, url.Values{"csrf": {cc.csrf}, "op": {"revoke"}, "code": {tc.code}}, nil)
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.want) {
			t.Fatalf("revoke %s: %d, want %d saying %q", tc.code, resp.StatusCode, tc.status, tc.want)
		}
	}
	if _, err := cc.codes.Redeem(context.Background(), name, made[1], "v2"); !errors.Is(err, access.ErrUnknown) {
		t.Fatalf("a revoked code: %v", err)
	}
	if resp, _ := postForm(t, cc.c, h.srv.URL+page, url.Values{"op": {"generate"}, "count": {"1"}}, nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("no csrf: %d", resp.StatusCode)
	}

	// Exported by hint.
	resp, body = cc.get(t, page+".csv", nil)
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if resp.StatusCode != 200 || err != nil || len(rows) != 3 { // the header and the two codes not revoked
		t.Fatalf("export: %d %v %q", resp.StatusCode, err, body)
	}
	for _, c := range made {
		if strings.Contains(body, c) || strings.Contains(body, strings.ReplaceAll(c, "-", "")) {
			t.Fatalf("the export holds the code %s", c)
		}
	}
	es := auditOf(t, h, name)
	var actions []string
	for _, e := range es {
		actions = append(actions, e.Action)
		if strings.Contains(e.New, made[0]) || strings.Contains(e.New, strings.ReplaceAll(made[0], "-", "")) {
			t.Fatalf("the audit log holds a code: %+v", e)
		}
	}
	if got := strings.Join(actions, " "); !strings.Contains(got, "codes.generate") || !strings.Contains(got, "codes.import") || strings.Count(got, "codes.revoke") != 3 {
		t.Fatalf("audit actions %q", got)
	}
}
