package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"waitingroom/web/media"

	"waitingroom/server/room"
	"waitingroom/views"
)

// cssVars returns the custom properties of the first rule of css matching
// block (a :root rule, or the one inside the dark scheme's media query).
func cssVars(t *testing.T, css, block string) map[string]string {
	t.Helper()
	m := regexp.MustCompile(block).FindStringSubmatch(css)
	if m == nil {
		t.Fatalf("no %s in the stylesheet", block)
	}
	out := map[string]string{}
	for _, decl := range strings.Split(m[1], ";") {
		if k, v, ok := strings.Cut(decl, ":"); ok && strings.HasPrefix(k, "--") {
			out[k] = longHex(strings.TrimSpace(v))
		}
	}
	return out
}

// longHex writes #abc as #aabbcc.
func longHex(c string) string {
	if len(c) == 4 && c[0] == '#' {
		return "#" + string([]byte{c[1], c[1], c[2], c[2], c[3], c[3]})
	}
	return strings.ToLower(c)
}

// TestSchemesMatchAppCSS: the colours that room.CheckAccent checks an
// accent against are static/app.css's, in both schemes: the page's and
// the card's backgrounds, the built-in accent and its label colour.
func TestSchemesMatchAppCSS(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../static/app.css")
	if err != nil {
		t.Fatal(err)
	}
	css := string(b)
	for _, tc := range []struct {
		scheme room.Scheme
		block  string
	}{
		{room.Light, `(?m)^:root\{([^}]*)\}`},
		{room.Dark, `@media \(prefers-color-scheme:dark\)\{:root\{([^}]*)\}`},
	} {
		v := cssVars(t, css, tc.block)
		if got := []string{v["--bg"], v["--card"]}; strings.Join(got, " ") != strings.Join(tc.scheme.Backgrounds, " ") {
			t.Errorf("%s: app.css backgrounds %v, room.%s has %v", tc.scheme.Name, got, tc.scheme.Name, tc.scheme.Backgrounds)
		}
		if v["--accent"] != tc.scheme.Default {
			t.Errorf("%s: app.css accent %s, room's default %s", tc.scheme.Name, v["--accent"], tc.scheme.Default)
		}
		if on := room.OnAccent(tc.scheme.Default, tc.scheme); v["--on-accent"] != on {
			t.Errorf("%s: app.css labels the accent %s, room.OnAccent says %s", tc.scheme.Name, v["--on-accent"], on)
		}
	}
}

func TestThemeCSS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		light, dark string
		want        string
	}{
		{"none", "", "", ""},
		{"light only", "#1a4fd0", "", "@media not all and (prefers-color-scheme:dark){:root{--accent:#1a4fd0;--on-accent:#ffffff}}\n"},
		{"dark only", "", "#8fb0ff", "@media (prefers-color-scheme:dark){:root{--accent:#8fb0ff;--on-accent:#0b1020}}\n"},
		{"both", "#1A4FD0", "#8fb0ff", "@media not all and (prefers-color-scheme:dark){:root{--accent:#1a4fd0;--on-accent:#ffffff}}\n" +
			"@media (prefers-color-scheme:dark){:root{--accent:#8fb0ff;--on-accent:#0b1020}}\n"},
		{"refused colours are left out", "#ffff00", "red;}body{display:none", ""},
	} {
		if got := themeCSS(room.Branding{AccentColor: tc.light, AccentColorDark: tc.dark}); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRoomPagesBranded: the room's page, status page, confirmation and
// error pages show its logo, shop name (linking the shop) and colours
// (a stylesheet at a fingerprinted address, cached forever); everything
// the operator typed is escaped.
func TestRoomPagesBranded(t *testing.T) {
	t.Parallel()
	rc := brandingConsole(t)
	ctx := context.Background()
	logo, err := rc.web.images.Put(ctx, "ann", media.LogoSlot, testImage(t, "png", 20, 10))
	if err != nil {
		t.Fatal(err)
	}
	const hostile = `<script>alert("x")</script><img src=x onerror=alert(1)>`
	set := rc.settings(t)
	set.Title = "Title " + hostile
	set.ShopURL = "https://shop.example/?a=1&b=2"
	set.Branding = room.Branding{Logo: logo, AccentColor: "#1a4fd0", AccentColorDark: "#8fb0ff",
		Description: "Desc " + hostile, ShopName: "Shop " + hostile}
	if err := rc.eng.SaveRoom(ctx, rc.room, set); err != nil {
		t.Fatal(err)
	}
	theme := themeURL(rc.room, set.Branding)
	pages := map[string]string{
		"room":   "/r/" + rc.room,
		"status": "/r/" + rc.room + "/status",
		"error":  "", // an error page of the room
	}
	for what, path := range pages {
		var body string
		var r reply
		if path == "" {
			w := httptest.NewRecorder()
			rc.web.htmlError(w, httptest.NewRequest("GET", "/r/"+rc.room+"/join", nil), http.StatusConflict, "refused", rc.room, false)
			r = reply{status: w.Code, body: w.Body.String()}
		} else {
			r = rc.do(t, "GET", path, "", map[string]string{"Accept-Encoding": "identity"}, nil)
		}
		body = r.body
		for _, want := range []string{
			`<link rel="stylesheet" href="` + theme + `">`,
			`<img class="brand-logo" src="` + logo + `" alt="">`, // the name is printed beside it
			`<a href="https://shop.example/?a=1&amp;b=2">`,
			`Shop &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("%s page (%d) lacks %s", what, r.status, want)
			}
		}
		if what != "error" && !strings.Contains(body, `<p class="brand-desc">Desc &lt;script&gt;`) {
			t.Errorf("%s page lacks the description", what)
		}
		if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
			t.Errorf("%s page has the operator's markup unescaped", what)
		}
	}
	r := rc.do(t, "GET", theme, "", nil, nil)
	if r.status != 200 || r.header.Get("Content-Type") != "text/css; charset=utf-8" || r.header.Get("Cache-Control") != "public, max-age=31536000, immutable" ||
		r.body != themeCSS(set.Branding) || r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("GET %s: %d %v %q", theme, r.status, r.header, r.body)
	}
	if r := rc.do(t, "GET", theme, "", map[string]string{"If-None-Match": r.header.Get("ETag")}, nil); r.status != http.StatusNotModified {
		t.Fatalf("revalidation: %d", r.status)
	}
	// A page rendered before a change links the old address: it gets the
	// current colours, cached briefly.
	set.Branding.AccentColor = "#0b57d0"
	if err := rc.eng.SaveRoom(ctx, rc.room, set); err != nil {
		t.Fatal(err)
	}
	rc.web.pages.mu.Lock()
	clear(rc.web.pages.faces) // the faces' cache has expired
	rc.web.pages.mu.Unlock()
	r = rc.do(t, "GET", theme, "", nil, nil)
	if r.status != 200 || r.header.Get("Cache-Control") != "public, max-age=60" || !strings.Contains(r.body, "#0b57d0") {
		t.Fatalf("old address: %d %q %q", r.status, r.header.Get("Cache-Control"), r.body)
	}
	if newer := themeURL(rc.room, set.Branding); newer == theme {
		t.Fatal("the address did not change with the colours")
	} else if r := rc.do(t, "GET", newer, "", nil, nil); r.status != 200 || !strings.Contains(r.header.Get("Cache-Control"), "immutable") {
		t.Fatalf("new address: %d %q", r.status, r.header.Get("Cache-Control"))
	}
	// A room with the built-in colours links no stylesheet, and has none.
	set.Branding = room.Branding{}
	if err := rc.eng.SaveRoom(ctx, rc.room, set); err != nil {
		t.Fatal(err)
	}
	rc.web.pages.mu.Lock()
	clear(rc.web.pages.pages)
	rc.web.pages.mu.Unlock()
	if r := rc.do(t, "GET", "/r/"+rc.room, "", map[string]string{"Accept-Encoding": "identity"}, nil); strings.Contains(r.body, "/theme/") || strings.Contains(r.body, "brand-logo") {
		t.Fatal("an unbranded room's page links a theme or a logo")
	}
	if r := rc.do(t, "GET", theme, "", nil, nil); r.status != http.StatusNotFound {
		t.Fatalf("an unbranded room's theme: %d", r.status)
	}
}

// TestConfirmationBranded: the order confirmation shows the room's brand
// as its other pages do (the server fills it as for them, brandOf).
func TestConfirmationBranded(t *testing.T) {
	t.Parallel()
	b := room.Branding{Logo: "/media/" + strings.Repeat("a", 64) + ".png", AccentColor: "#1a4fd0", ShopName: `<i>Shop</i>`}
	var buf strings.Builder
	page := views.ConfirmPage{Room: "r1", Title: "T", T: views.For("en"), OrderID: "x", Quantity: 1,
		Brand: brandOf("r1", "T", "https://shop.example", b)}
	if err := views.Confirm(page).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`href="` + themeURL("r1", b) + `"`, `src="` + b.Logo + `" alt=""`, `&lt;i&gt;Shop&lt;/i&gt;`, `<a href="https://shop.example">`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the confirmation lacks %s", want)
		}
	}
}
