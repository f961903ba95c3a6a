package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"waitingroom/server/share"
)

// TestShareDeleteAsksFirst: deleting a share link takes a confirmation
// that names the link, its clicks and the printed QR codes; without it
// nothing is deleted.
func TestShareDeleteAsksFirst(t *testing.T) {
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
