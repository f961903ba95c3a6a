package web

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"waitingroom/web/gatemode"
)

// TestGateCookieSecure: wr_gate is Secure behind TLS as a trusted proxy
// says (X-Forwarded-Proto), never as any client says.
func TestGateCookieSecure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted bool
		proto   string
		secure  bool
	}{
		{"trusted proxy, https", true, "https", true},
		{"trusted proxy, http", true, "http", false},
		{"untrusted client, https", false, "https", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGateHarness(t, func(o *Options) {
				if tc.trusted {
					o.TrustedProxies = loopbackProxy
				}
			})
			r := g.form(t, gatemode.EnterPath, url.Values{"pass": {g.newPass(t)}}, map[string]string{"X-Forwarded-Proto": tc.proto}, nil)
			c := gateCookieOf(r)
			if r.status != 303 || c == nil || c.Secure != tc.secure {
				t.Fatalf("enter: %d, cookie %v", r.status, c)
			}
		})
	}
}

var stylesheet = regexp.MustCompile(`<link rel="stylesheet" href="([^"]+)"`)

// TestGateEnterPageAssets: the enter callback's pages, served on the
// shop's host, load their stylesheet from the waiting room's origin (the
// pass's issuer here, PUBLIC_URL when set), which their CSP allows.
func TestGateEnterPageAssets(t *testing.T) {
	g := newGateHarness(t, nil)
	p := g.newPass(t)
	g.form(t, gatemode.EnterPath, url.Values{"pass": {p}}, nil, nil)
	r := g.form(t, gatemode.EnterPath, url.Values{"pass": {p}}, nil, nil)
	m := stylesheet.FindStringSubmatch(r.body)
	csp := r.header.Get("Content-Security-Policy")
	if r.status != http.StatusConflict || m == nil || !strings.HasPrefix(m[1], g.srv.URL+"/static/") || !strings.Contains(csp, "style-src "+g.srv.URL+";") {
		t.Fatalf("the used pass's page: %d, stylesheet %q, CSP %q", r.status, m, csp)
	}
	if resp, err := http.Get(m[1]); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the stylesheet: %v %v", resp, err)
	}
}
