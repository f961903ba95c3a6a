package gatemode

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"unicode"

	"waitingroom/server/room"
)

func TestProtectTableMatch(t *testing.T) {
	rooms := map[string]room.Settings{}
	add := func(name string, failOpen bool, p ...string) {
		s := room.Defaults(name)
		s.Gate.Protect, s.Gate.FailOpen = p, failOpen
		rooms[name] = s
	}
	add("a", false, "/checkout", "/api/pay")
	add("b", true, "/checkout/vip", "/Tickets/")
	add("c", false, "/checkout") // the same prefix as a: a, by name
	table := newProtectTable(rooms)
	for _, tt := range []struct {
		path, room string
	}{
		{"/checkout", "a"},
		{"/checkout/", "a"},
		{"/checkout/x", "a"},
		{"/checkout;x=1", "a"},
		{"/checkouts", ""},
		{"/checkout/vip", "b"},
		{"/checkout/vip/1", "b"},
		{"/checkout/vipx", "a"},
		{"/CHECKOUT/VIP", "b"},
		{"/api/pay", "a"},
		{"/api/payment", ""},
		{"/tickets/1", "b"},
		{"/tickets", ""},
		{"/a/../checkout", "a"},
		{"/./checkout", "a"},
		{"//checkout", "a"},
		{"checkout", "a"},
		{"/checkout.json", "a"},
		{"/checkout.", "a"},
		{"/checkout ", "a"},
		{"/checkout;jsessionid=1", "a"},
		{"/checkout-help", ""},
		{"/checkout_2", ""},
		{"/..;/checkout", "a"},
		{"/x/..;/checkout", "a"},
		{"/.;/checkout", "a"},
		{"/;x/checkout", "a"},
		{"/checkout/..;/", "a"},
		{"/checkout/../x", "a"},
		{"/api/pay.json", "a"},
		{"/api/./pay", "a"},
		{"/api//pay", "a"},
		{"/chec\u212aout", "a"},
		{"/T\u0130CKETS/1", "b"},
		{"/tic\u212aets/1", "b"},
		{"/api/pay\u017f", ""},
		{"/api/pay\u00e9", "a"},
		{"/tickets;x/1", "b"},
		{"/", ""},
		{"", ""},
	} {
		r, ok := table.matchPath(tt.path)
		if ok != (tt.room != "") || r.room != tt.room {
			t.Errorf("%q: room %q (%v), want %q", tt.path, r.room, ok, tt.room)
		}
	}
	if r, _ := table.matchPath("/checkout/vip"); !r.failOpen {
		t.Error("room b's failOpen was lost")
	}
	if _, ok := protectTable(nil).matchPath("/checkout"); ok {
		t.Error("an empty table protects")
	}
}

// parseTarget parses a request line's target as the HTTP server does.
func parseTarget(target string) (*http.Request, error) {
	return http.ReadRequest(bufio.NewReader(strings.NewReader("GET " + target + " HTTP/1.1\r\nHost: shop.example\r\n\r\n")))
}

func TestCheckPath(t *testing.T) {
	for _, tt := range []struct {
		target string
		bad    bool
	}{
		{"/checkout", false},
		{"/checkout%20", false},
		{"/%63heckout", false},
		{"/checkout.json?x=%2f%00%25", false},
		{"/caf%C3%A9", false},
		{"/checkout%00", true},
		{"/checkout%09", true},
		{"/checkout%0a", true},
		{"/checkout%7f", true},
		{"/checkout%c2%85", true},
		{"/%5Ccheckout", true},
		{"/%5ccheckout", true},
		{"/\\checkout", true},
		{"/x%2fcheckout", true},
		{"/x%2Fcheckout", true},
		{"/x%2f%22", true},
		{"/%2563heckout", true},
		{"/checkout%25", true},
		{"/%c0%afcheckout", true},
		{"/%ffcheckout", true},
		{"http://shop.example/x%2fy", true},
	} {
		r, err := parseTarget(tt.target)
		if err != nil {
			t.Fatalf("%q: %v", tt.target, err)
		}
		if err := checkPath(r.URL); (err != nil) != tt.bad {
			t.Errorf("%q: refused %v, want %v", tt.target, err != nil, tt.bad)
		}
	}
}

// routerModel is how one kind of shop router reads the path it receives
// (escaped, as on the request line): the path it routes, and whether it
// matches regardless of case. A route "/checkout" serves the routed path
// when it equals the prefix or lies below it.
type routerModel struct {
	name  string
	route func(escaped string) (string, bool)
	fold  func(string) string
}

var routerModels = []routerModel{
	// Rails: decoded once, doubled slashes squeezed, dot segments
	// resolved (by the server in front), an optional trailing slash and
	// ".:format" suffix, case-sensitive.
	{"rails", func(e string) (string, bool) {
		p, err := url.PathUnescape(e)
		if err != nil {
			return "", false
		}
		return cutFormat(trimSlash(cleanPath(p))), true
	}, func(s string) string { return s }},
	// Express: decoded once, an optional trailing slash, case-insensitive.
	{"express", func(e string) (string, bool) {
		p, err := url.PathUnescape(e)
		if err != nil {
			return "", false
		}
		return trimSlash(collapseSlashes(p)), true
	}, strings.ToLower},
	// Spring on a servlet container: ";" parameters cut from every
	// segment, decoded once, "\\" read as "/", slashes collapsed, dot
	// segments resolved, a ".*" suffix and trailing slash optional,
	// case-insensitive as Java's equalsIgnoreCase.
	{"spring", func(e string) (string, bool) {
		p, err := url.PathUnescape(cutParams(e))
		if err != nil {
			return "", false
		}
		p = cutParams(strings.ReplaceAll(p, "\\", "/"))
		return cutFormat(trimSlash(cleanPath(p))), true
	}, func(s string) string {
		return strings.Map(func(r rune) rune { return unicode.ToLower(unicode.ToUpper(r)) }, s)
	}},
}

func trimSlash(p string) string {
	if len(p) > 1 {
		return strings.TrimSuffix(p, "/")
	}
	return p
}

// cutFormat cuts the last segment's suffix from its first ".".
func cutFormat(p string) string {
	i := strings.LastIndexByte(p, '/')
	if j := strings.IndexByte(p[i+1:], '.'); j > 0 {
		return p[:i+1+j]
	}
	return p
}

// protects reports whether m routes escaped to a handler under prefix.
func (m routerModel) protects(escaped, prefix string) bool {
	p, ok := m.route(escaped)
	if !ok {
		return false
	}
	p, prefix = m.fold(p), m.fold(prefix)
	base := strings.TrimSuffix(prefix, "/")
	return p == prefix || p == base && base == prefix || strings.HasPrefix(p, base+"/")
}

// fuzzPrefixes are the protect prefixes of FuzzProxyGuards.
var fuzzPrefixes = []string{"/checkout", "/api/pay", "/tickets/"}

// FuzzProxyGuards: no request target that a Rails-, Express- or
// Spring-like router would send to a protected handler reaches the shop
// without the gate guarding it (or refusing it with 400). The routers
// read the path as the proxy forwards it.
func FuzzProxyGuards(f *testing.F) {
	for _, s := range []string{
		"/checkout", "/checkout.json", "/checkout%20", "/checkout%00", "/%5Ccheckout", "/%2563heckout",
		"/CHECKOUT", "/checkout.", "/%2e%2e/checkout", "/x/%2e%2e/checkout", "//checkout", "/./checkout",
		"/foo/../checkout", "/checkout;jsessionid=1", "/checkout%09", "/%c0%afcheckout", "/checkout+",
		"/x?/checkout", "http://shop.example/checkout", "/..;/checkout", "/x/..;/checkout", "/chec%E2%84%AAout",
		"/api/pay.json", "/API//pay/", "/api/./pay", "/tickets/1", "/Tickets;x/1", "/tickets%3b/1", "/checkout%3bx",
		"/api/pay%c5%bf", "/%3b/checkout", "/checkout/..;/", "*",
	} {
		f.Add(s)
	}
	rooms := map[string]room.Settings{}
	s := room.Defaults("r")
	s.Gate.Protect = fuzzPrefixes
	rooms["r"] = s
	table := newProtectTable(rooms)
	origin, _ := url.Parse("http://origin.example/")
	f.Fuzz(func(t *testing.T, target string) {
		r, err := parseTarget(target)
		if err != nil || checkPath(r.URL) != nil {
			return // 400
		}
		if _, guarded := table.matchPath(r.URL.Path); guarded {
			return
		}
		pr := &httputil.ProxyRequest{In: r, Out: r.Clone(context.Background())}
		pr.SetURL(origin)
		forwarded, _, _ := strings.Cut(pr.Out.URL.RequestURI(), "?")
		for _, m := range routerModels {
			for _, prefix := range fuzzPrefixes {
				if m.protects(forwarded, prefix) {
					t.Errorf("%q reaches the shop unguarded as %q, which %s routes under %q", target, forwarded, m.name, prefix)
				}
			}
		}
	})
}
