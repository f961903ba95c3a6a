package web

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"waitingroom/server/bypass"
	"waitingroom/server/queue"
	"waitingroom/server/servicetest"
)

var newLinkField = regexp.MustCompile(`id="wr-new-link" readonly value="([^"]+)"`)

// TestConsoleTestLinks: an operator makes a test link, read once on the
// answer; refused fields say why in the operator's language; the list
// counts its uses and never shows the address; revoking it ends it. A
// form without the CSRF token changes nothing.
func TestConsoleTestLinks(t *testing.T) {
	t.Parallel()
	rdb := servicetest.Redis(t)
	links := bypass.New(queue.New(rdb, queue.DefaultNamespace(rdb)), testSigner(t), time.Now)
	sc := newShareConsoleWith(t, func(o *Options) { o.TestLinks = links })
	page := sc.h.srv.URL + "/admin/rooms/" + sc.h.room + "/links"
	for lang, want := range map[string]string{"en": "Test links of " + sc.h.room, "ko": sc.h.room + "의 테스트 링크"} {
		resp, body := sc.get(t, "/admin/rooms/"+sc.h.room+"/links", map[string]string{"Accept-Language": lang})
		if resp.StatusCode != 200 || !strings.Contains(body, want) || !strings.Contains(body, `name="uses"`) {
			t.Fatalf("%s page: %d %.400s", lang, resp.StatusCode, body)
		}
	}
	for _, c := range []struct {
		form  url.Values
		lang  string
		field string
		says  string
	}{
		{url.Values{"op": {"make"}, "uses": {"0"}}, "en", "uses", "from 1 to 1000"},
		{url.Values{"op": {"make"}, "uses": {"2"}, "expiresAt": {"2001-01-01T10:00"}}, "ko", "expiresAt", "앞으로의 날짜"},
	} {
		c.form.Set("csrf", sc.csrf)
		resp, body := postForm(t, sc.c, page, c.form, map[string]string{"Accept-Language": c.lang})
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, `id="err-`+c.field+`"`) || !strings.Contains(body, c.says) {
			t.Fatalf("%v: %d %.500s", c.form, resp.StatusCode, body)
		}
	}
	if resp, _ := postForm(t, sc.c, page, url.Values{"op": {"make"}, "uses": {"3"}}, nil); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("no csrf: %d", resp.StatusCode)
	}
	for _, op := range []string{"", "delete"} {
		if resp, body := postForm(t, sc.c, page, url.Values{"csrf": {sc.csrf}, "op": {op}, "uses": {"3"}}, nil); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Unknown action") {
			t.Fatalf("op %q: %d %.300s, want 400, making no link", op, resp.StatusCode, body)
		}
	}
	resp, body := postForm(t, sc.c, page, url.Values{"csrf": {sc.csrf}, "op": {"make"}, "uses": {"3"}}, nil)
	m := newLinkField.FindStringSubmatch(body)
	if resp.StatusCode != 200 || m == nil || !strings.Contains(m[1], "/r/"+sc.h.room+"/bypass?t=") {
		t.Fatalf("make: %d %.600s", resp.StatusCode, body)
	}
	list, err := links.List(t.Context(), sc.h.room)
	if err != nil || len(list) != 1 || list[0].Uses != 3 {
		t.Fatalf("the room's links: %+v %v", list, err)
	}
	_, body = sc.get(t, "/admin/rooms/"+sc.h.room+"/links", nil)
	tok := m[1][strings.Index(m[1], "t=")+2:]
	if strings.Contains(body, tok) || !strings.Contains(body, `data-link="`+list[0].ID+`"`) {
		t.Fatalf("the list shows the address, or not the link: %.800s", body)
	}
	resp, body = postForm(t, sc.c, page, url.Values{"csrf": {sc.csrf}, "op": {"revoke"}, "id": {list[0].ID}}, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, "The link was revoked") {
		t.Fatalf("revoke: %d %.400s", resp.StatusCode, body)
	}
	if list, _ := links.List(t.Context(), sc.h.room); len(list) != 0 {
		t.Fatalf("after the revocation: %+v", list)
	}
}
