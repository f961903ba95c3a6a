package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"waitingroom/server/room"
	"waitingroom/views"
	"waitingroom/web/response"
)

// A room's accent colours reach its pages through a stylesheet of its own
// (the CSP allows no inline style), at an address that names its content,
// /r/{room}/theme/{hash}.css, cached forever.

// themeCSS is the stylesheet of b's accent colours, "" when b keeps the
// built-in ones. The light accent applies outside the dark scheme only, so
// that an unset dark accent keeps static/app.css's.
func themeCSS(b room.Branding) string {
	var sb strings.Builder
	for _, sc := range []struct {
		colour, media string
		scheme        room.Scheme
	}{
		{b.AccentColor, "not all and (prefers-color-scheme:dark)", room.Light},
		{b.AccentColorDark, "(prefers-color-scheme:dark)", room.Dark},
	} {
		c := strings.ToLower(sc.colour)
		if c == "" || room.CheckAccent(c, sc.scheme) != nil {
			continue // the settings are validated; a CSS value is never the operator's text
		}
		sb.WriteString("@media " + sc.media + "{:root{--accent:" + c + ";--on-accent:" + room.OnAccent(c, sc.scheme) + "}}\n")
	}
	return sb.String()
}

// themeFile is the last segment of a theme's path: its content's hash.
func themeFile(css string) string {
	sum := sha256.Sum256([]byte(css))
	return hex.EncodeToString(sum[:8]) + ".css"
}

// themeURL is the path of room name's stylesheet for b, "" when there is
// none.
func themeURL(name string, b room.Branding) string {
	css := themeCSS(b)
	if css == "" {
		return ""
	}
	return "/r/" + name + "/theme/" + themeFile(css)
}

// brandOf is the branding of room name on its pages. The logo's text
// alternative is the room's title when no shop name is printed beside it;
// with the name beside it the logo is decorative (alt=""), so that a
// screen reader does not say the name twice.
func brandOf(name, title, shopURL string, b room.Branding) views.Brand {
	alt := title
	if b.ShopName != "" {
		alt = ""
	}
	return views.Brand{Logo: b.Logo, LogoAlt: alt, Description: b.Description, ShopName: b.ShopName,
		ShopURL: shopURL, Theme: themeURL(name, b)}
}

// brandFor is the branding of room name for its error pages, from the
// cache of the rooms' looks; empty when the room cannot be read.
func (s *Server) brandFor(ctx context.Context, name string) views.Brand {
	f := s.roomFace(ctx, name)
	if !f.found {
		return views.Brand{}
	}
	return brandOf(name, f.title, f.shopURL, f.brand)
}

// themeFileLen is the length of a theme's file name: 16 hex digits and
// ".css".
const themeFileLen = 16 + len(".css")

// validThemeFile reports whether file has the form of themeFile's names.
func validThemeFile(file string) bool {
	h, ok := strings.CutSuffix(file, ".css")
	return ok && len(file) == themeFileLen && strings.Trim(h, "0123456789abcdef") == ""
}

// serveTheme serves GET /r/{room}/theme/{file}. The address of the current
// colours is cached forever; an older one (a page rendered before a
// change) gets the current colours, cached briefly. A malformed address
// is refused before any read; an unknown one is answered from a face read
// less than a second ago.
func (s *Server) serveTheme(w http.ResponseWriter, r *http.Request) {
	name, file := r.PathValue("room"), r.PathValue("file")
	if !room.ValidName(name) || !validThemeFile(file) {
		response.WriteError(w, http.StatusNotFound, "not_found", "No such stylesheet.")
		return
	}
	f := s.roomFace(r.Context(), name)
	css := themeCSS(f.brand)
	if f.found && themeFile(css) != file {
		// The cache may be older than the page that links file.
		if cur, err := s.currentFace(r.Context(), name); err == nil {
			f, css = cur, themeCSS(cur.brand)
		}
	}
	if !f.found || css == "" {
		t := s.roomText(r, name)
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusNotFound, Heading: t.TitleNoSuchPage, Message: t.NoSuchRoom})
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/css; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	if themeFile(css) == file {
		etag := `"` + strings.TrimSuffix(file, ".css") + `"`
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	} else {
		h.Set("Cache-Control", "public, max-age=60")
	}
	w.Write([]byte(css))
}
