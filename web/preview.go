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
	"waitingroom/web/response"
)

// siteName names the site in a preview when the room has no shop name.
const siteName = "waitingroom"

// previews sets up the link previews, the default preview images and the
// front page from o. It returns an error when OG_FONT names no usable
// file.
func (s *Server) previews(o Options) error {
	s.publicURL = strings.TrimSuffix(o.PublicURL, "/")
	s.trustHosts = originsByHost(o.AllowedOrigins)
	if s.publicURL == "" {
		s.log.Warn("PUBLIC_URL is unset: link previews carry absolute URLs (og:url, og:image) only for loopback hosts and the hosts of ALLOWED_ORIGINS; set PUBLIC_URL in production")
	}
	s.landingURL = o.LandingURL
	path := o.OGFont
	if path != "" {
		if err := checkFontFile(path); err != nil {
			return fmt.Errorf("web: OG_FONT: %w", err)
		}
	} else if path = findFont(cjkFontPaths()); path == "" {
		s.log.Warn("no CJK font found for the default preview images: Go's font draws them, and leave Korean text out; install fonts-noto-cjk or set OG_FONT")
	}
	if path != "" {
		s.log.Info("preview images font", "path", path)
	}
	s.og = newOGImages(newOGFont(path, s.log))
	s.front = newHomeCache(s.clock.Now)
	return nil
}

// imageSizeWait bounds the image store's lookup of an uploaded preview
// image's size: the shared room page never waits on the order database
// for longer, and goes without the size instead.
const imageSizeWait = 200 * time.Millisecond

// linkPreview returns the room page's preview: absolute URLs under base,
// the room's uploaded image (with its size, when the image store answers
// within imageSizeWait) or the default one the server draws. With base ""
// (a request's host that may not be trusted) the tags that need an
// absolute URL are left out: og:url and the image.
func (s *Server) linkPreview(ctx context.Context, base, name string, set room.Settings, t views.Messages, now time.Time) *views.LinkPreview {
	title := set.Title
	if title == "" {
		title = name
	}
	p := &views.LinkPreview{Title: title, Description: set.Description,
		SiteName: set.ShopName, Locale: views.OGLocale(t.Lang), ImageAlt: title}
	if p.Description == "" {
		p.Description = views.Fill(t.Description, "title", title)
	}
	if p.SiteName == "" {
		p.SiteName = siteName
	}
	if base == "" {
		return p
	}
	p.URL = base + "/r/" + name
	if set.OGImage != "" {
		p.Image = base + set.OGImage
		p.ImageWidth, p.ImageHeight = s.imageSize(ctx, set.OGImage)
	} else {
		p.Image = base + ogImagePath(name, newOGCard(name, faceOf(set, now), t, now).fingerprint(s.og.font.id()))
		p.ImageWidth, p.ImageHeight = ogWidth, ogHeight
	}
	return p
}

// imageSize returns the size of the uploaded image at path (/media/…)
// from the image store, waiting at most imageSizeWait; 0, 0 when it is not
// known in time.
func (s *Server) imageSize(ctx context.Context, path string) (width, height int) {
	if s.images == nil || !room.ValidMediaPath(path) {
		return 0, 0
	}
	ctx, cancel := context.WithTimeout(ctx, imageSizeWait)
	defer cancel()
	sum := strings.TrimPrefix(path[:strings.LastIndexByte(path, '.')], "/media/")
	img, err := s.images.Image(ctx, sum)
	if err != nil {
		return 0, 0
	}
	return img.Width, img.Height
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
		response.WriteError(w, http.StatusNotFound, "not_found", "No such image.")
		return
	}
	key := name + "/" + fp
	if b := s.og.cached(key); b != nil { // its fingerprint says it is current
		servePNG(w, r, b, fp)
		return
	}
	// An address that is not the current image's (outdated, or made up)
	// is answered from a face read less than a second ago.
	f, err := s.currentFace(r.Context(), name)
	switch {
	case err != nil:
		s.fail(w, r, err)
		return
	case !f.found:
		response.WriteError(w, http.StatusNotFound, "not_found", "No such image.")
		return
	}
	// The address holds no language: the card is the one of either
	// language whose fingerprint it is (they are the same without an
	// opening time).
	now, fontID := s.clock.Now(), s.og.font.id()
	var card ogCard
	found := false
	for _, lang := range []string{room.LangKorean, room.LangEnglish} {
		if c := newOGCard(name, f, views.For(lang), now); c.fingerprint(fontID) == fp {
			card, found = c, true
			break
		}
	}
	if !found {
		cur := newOGCard(name, f, s.roomText(r, name), now)
		w.Header().Set("Cache-Control", "public, max-age=60")
		http.Redirect(w, r, ogImagePath(name, cur.fingerprint(fontID)), http.StatusFound)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	b, err := s.og.image(ctx, card, key)
	if err != nil {
		s.log.Warn("og image", "room", name, "err", err)
		response.WriteError(w, http.StatusServiceUnavailable, "unavailable", "The image is briefly unavailable.")
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
