package request

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"waitingroom/server/visitor"
)

// TestIdentityVisitor: a room's identity cookie names its visitor in that
// room only, until its end, and not once altered.
func TestIdentityVisitor(t *testing.T) {
	s, err := visitor.NewSigner([]byte("test-secret-key-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := visitor.NewID()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	w := httptest.NewRecorder()
	SetIdentityCookie(w, httptest.NewRequest("GET", "/", nil), s, "drop", id, "", now)
	c := w.Result().Cookies()[0]
	w = httptest.NewRecorder()
	SetIdentityCookie(w, httptest.NewRequest("GET", "/", nil), s, "drop", id, "presale", now)
	lc := w.Result().Cookies()[0]
	if c.Name != "wr_vid_drop" || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.MaxAge != int(CookieMaxAge.Seconds()) {
		t.Fatalf("cookie %+v", c)
	}
	other, _ := visitor.NewID()
	cases := []struct {
		name   string
		cookie string // name=value
		room   string
		at     time.Time
		ok     bool
		line   string
	}{
		{"its room", c.Name + "=" + c.Value, "drop", now, true, ""},
		{"with a line", lc.Name + "=" + lc.Value, "drop", now, true, "presale"},
		{"another line", lc.Name + "=" + strings.Replace(lc.Value, ".presale.", ".general.", 1), "drop", now, false, ""},
		{"its line taken off", lc.Name + "=" + strings.Replace(lc.Value, ".presale.", ".", 1), "drop", now, false, ""},
		{"an empty line", lc.Name + "=" + strings.Replace(lc.Value, ".presale.", "..", 1), "drop", now, false, ""},
		{"another room's name", "wr_vid_other=" + c.Value, "other", now, false, ""},
		{"at its end", c.Name + "=" + c.Value, "drop", now.Add(CookieMaxAge), false, ""},
		{"another visitor", c.Name + "=" + other + c.Value[len(id):], "drop", now, false, ""},
		{"a longer life", c.Name + "=" + strings.Replace(c.Value, ".18", ".28", 1), "drop", now, false, ""},
		{"no MAC", c.Name + "=" + id + ".1900000000", "drop", now, false, ""},
		{"wr_vid's shape", c.Name + "=" + s.Sign(id), "drop", now, false, ""},
		{"none", "", "drop", now, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			if tc.cookie != "" {
				r.Header.Set("Cookie", tc.cookie)
			}
			got, line, ok := IdentityOf(r, s, tc.room, tc.at)
			if ok != tc.ok || ok && (got != id || line != tc.line) {
				t.Fatalf("IdentityOf: %q %q %v, want %v %q", got, line, ok, tc.ok, tc.line)
			}
		})
	}
}
