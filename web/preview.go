package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"waitingroom/server/room"
	"waitingroom/views"
)

// siteName names the site in a preview when the room has no shop name.
const siteName = "waitingroom"

// previews sets up the link previews, the default preview images and the
// front page from o. It returns an error when OG_FONT names no usable
// file.
func (s *Server) previews(o Options) error {
	s.publicURL = strings.TrimSuffix(o.PublicURL, "/")
	s.landingURL = o.LandingURL
	path := o.OGFont
	if path != "" {
		if err := checkFontFile(path); err != nil {
			return fmt.Errorf("web: OG_FONT: %w", err)
		}
	} else if path = findFont(cjkFontPaths()); path == "" {
		s.log.Warn("no CJK font found for the default preview images: Go's font draws them, and Korean titles come out as boxes; install fonts-noto-cjk or set OG_FONT")
	}
	if path != "" {
		s.log.Info("preview images font", "path", path)
	}
	s.og = newOGImages(newOGFont(path, s.log))
	s.front = newHomeCache()
	return nil
}

// baseURL returns the site's absolute origin for link previews: PUBLIC_URL
// when set, else the request's host, over https when the request came over
// TLS, to this server or to a trusted proxy that says so.
func (s *Server) baseURL(r *http.Request) string {
	if s.publicURL != "" {
		return s.publicURL
	}
	host := strings.ToLower(r.Host)
	if !validHost(host) {
		host = "localhost"
	}
	if s.overTLS(r) {
		return "https://" + host
	}
	return "http://" + host
}

// validHost reports whether h looks like a host[:port] (a name, an IPv4
// address or a bracketed IPv6 address), so that a forged Host header can
// put nothing else into a page.
func validHost(h string) bool {
	if h == "" || len(h) > 260 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == ':' || c == '[' || c == ']') {
			return false
		}
	}
	return true
}

// linkPreview returns the room page's preview: absolute URLs under base,
// the room's uploaded image (with its size, when the image store answers
// within ctx) or the default one the server draws.
func (s *Server) linkPreview(ctx context.Context, base, name string, set room.Settings, t views.Messages, now time.Time) *views.LinkPreview {
	title := set.Title
	if title == "" {
		title = name
	}
	p := &views.LinkPreview{Title: title, Description: set.Description, URL: base + "/r/" + name,
		SiteName: set.ShopName, Locale: views.OGLocale(t.Lang), ImageAlt: title}
	if p.Description == "" {
		p.Description = views.Fill(t.Description, "title", title)
	}
	if p.SiteName == "" {
		p.SiteName = siteName
	}
	if set.OGImage != "" {
		p.Image = base + set.OGImage
		if s.media != nil && room.ValidMediaPath(set.OGImage) {
			sum := strings.TrimPrefix(set.OGImage[:strings.LastIndexByte(set.OGImage, '.')], "/media/")
			if img, err := s.media.image(ctx, sum); err == nil {
				p.ImageWidth, p.ImageHeight = img.Width, img.Height
			}
		}
	} else {
		p.Image = base + ogImagePath(name, newOGCard(name, set, t, now).fingerprint(s.og.font.id()))
		p.ImageWidth, p.ImageHeight = ogWidth, ogHeight
	}
	return p
}

// ogImagePath is the fingerprinted path of a room's default preview image.
func ogImagePath(name, fingerprint string) string {
	return "/r/" + name + "/og/" + fingerprint + ".png"
}

// Bounds on the default preview images.
const (
	// maxOGImages bounds the images kept in memory (each some tens of KB).
	maxOGImages = 128
	// ogDrawing bounds the images drawn at once (each holds a 3 MB
	// canvas), and ogDrawWait how long a request waits for its turn.
	ogDrawing  = 2
	ogDrawWait = 5 * time.Second
)

// ogImages draws the default preview images and keeps them by fingerprint.
type ogImages struct {
	font  *ogFont
	slots chan struct{}
	mu    sync.Mutex
	pngs  map[string][]byte
}

func newOGImages(f *ogFont) *ogImages {
	return &ogImages{font: f, slots: make(chan struct{}, ogDrawing), pngs: map[string][]byte{}}
}

// cached returns the PNG kept under key (room/fingerprint), or nil.
func (o *ogImages) cached(key string) []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pngs[key]
}

// image returns the PNG of card c, kept under key (room/fingerprint): from
// memory, else drawn, waiting at most ogDrawWait for a drawing slot.
func (o *ogImages) image(ctx context.Context, c ogCard, key string) ([]byte, error) {
	if b := o.cached(key); b != nil {
		return b, nil
	}
	ctx, cancel := context.WithTimeout(ctx, ogDrawWait)
	defer cancel()
	select {
	case o.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("og image: wait for a drawing slot: %w", ctx.Err())
	}
	defer func() { <-o.slots }()
	if b := o.cached(key); b != nil { // drawn while this one waited
		return b, nil
	}
	b, err := drawOGImage(c, o.font)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	if len(o.pngs) >= maxOGImages {
		for k := range o.pngs { // drop any one: a dropped image is drawn again
			delete(o.pngs, k)
			break
		}
	}
	o.pngs[key] = b
	o.mu.Unlock()
	return b, nil
}

// ogImage serves GET /r/{room}/og/{file}, file being "{fingerprint}.png":
// the room's default preview image, immutable under its fingerprint. An
// outdated fingerprint (the room changed since the preview was made) is
// redirected to the current one. It takes no ticket and sets no cookie.
func (s *Server) ogImage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	fp, ok := strings.CutSuffix(r.PathValue("file"), ".png")
	if !room.ValidName(name) || !ok || len(fp) != 24 || strings.Trim(fp, "0123456789abcdef") != "" {
		writeError(w, http.StatusNotFound, "not_found", "No such image.")
		return
	}
	key := name + "/" + fp
	if b := s.og.cached(key); b != nil { // its fingerprint says it is current
		servePNG(w, r, b, fp)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	set, err := s.rooms.Room(ctx, name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// The address holds no language: the card is the one of either
	// language whose fingerprint it is (they are the same without an
	// opening time).
	now, fontID := time.Now(), s.og.font.id()
	var card ogCard
	found := false
	for _, lang := range []string{room.LangKorean, room.LangEnglish} {
		if c := newOGCard(name, set, views.For(lang), now); c.fingerprint(fontID) == fp {
			card, found = c, true
			break
		}
	}
	if !found {
		cur := newOGCard(name, set, s.roomText(r, name), now)
		w.Header().Set("Cache-Control", "public, max-age=60")
		http.Redirect(w, r, ogImagePath(name, cur.fingerprint(fontID)), http.StatusFound)
		return
	}
	b, err := s.og.image(ctx, card, key)
	if err != nil {
		s.log.Warn("og image", "room", name, "err", err)
		writeError(w, http.StatusServiceUnavailable, "unavailable", "The image is briefly unavailable.")
		return
	}
	servePNG(w, r, b, fp)
}

// servePNG answers the preview image b, immutable under its fingerprint.
func servePNG(w http.ResponseWriter, r *http.Request, b []byte, fp string) {
	h := w.Header()
	h.Set("Content-Type", "image/png")
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("ETag", `"`+fp+`"`)
	if r.Header.Get("If-None-Match") == `"`+fp+`"` {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeBody(w, r, b, nil)
}
