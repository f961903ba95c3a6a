package web

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"waitingroom/server/audit"
	"waitingroom/server/operator"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
)

// newConsoleHarness is newHarness with the console wired to a freshly
// migrated PostgreSQL: its operators, sessions and audit log.
func newConsoleHarness(t *testing.T, mut func(*Options)) (*harness, *store.DB) {
	t.Helper()
	db := storetest.Migrated(t, store.Postgres)
	ops, err := operator.New(db)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(o *Options) {
		o.Operators, o.Audit = ops, audit.New(db)
		if mut != nil {
			mut(o)
		}
	})
	return h, db
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn signs in to the console of srv with the admin token and returns
// a client that carries the session cookie (it does not follow
// redirects) and the session's CSRF token, read from a page.
func signIn(t *testing.T, srv *httptest.Server, token string) (*http.Client, string) {
	t.Helper()
	return signInWith(t, srv, url.Values{"token": {token}})
}

// signInWith signs in with the form fields f (token, or name and
// password).
func signInWith(t *testing.T, srv *httptest.Server, f url.Values) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(srv.URL+"/admin/signin", f)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d, want 303", resp.StatusCode)
	}
	resp, err = c.Get(srv.URL + "/admin/signin")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := csrfField.FindStringSubmatch(string(body))
	if m == nil {
		t.Fatalf("no csrf field on the signed-in page: %.300s", body)
	}
	return c, strings.TrimSpace(m[1])
}
