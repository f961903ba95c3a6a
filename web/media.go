package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"sync"

	"waitingroom/server/room"
	"waitingroom/server/store"
	"waitingroom/views"
)

// Images keeps the uploaded images (store.DB).
type Images interface {
	PutImage(ctx context.Context, img store.Image) error
	Image(ctx context.Context, sumHex string) (store.Image, error)
}

// media serves and keeps the uploaded images: the store, a small cache of
// recently served images (a room's logo is fetched by every buyer of a
// sale that no CDN fronts), and one slot for decoding an upload.
type media struct {
	store Images
	// decoding holds the one upload being decoded: a full decode of a
	// large image takes tens of MiB, and uploads are rare.
	decoding chan struct{}

	mu     sync.Mutex
	cached map[string]store.Image
	bytes  int
}

// mediaCacheBytes bounds the images kept in memory.
const mediaCacheBytes = 32 << 20

func newMedia(imgs Images) *media {
	if imgs == nil {
		return nil
	}
	return &media{store: imgs, decoding: make(chan struct{}, 1), cached: map[string]store.Image{}}
}

// image returns the image sumHex, from the cache or the store.
func (m *media) image(ctx context.Context, sumHex string) (store.Image, error) {
	m.mu.Lock()
	img, ok := m.cached[sumHex]
	m.mu.Unlock()
	if ok {
		return img, nil
	}
	img, err := m.store.Image(ctx, sumHex)
	if err != nil {
		return store.Image{}, err
	}
	m.remember(img)
	return img, nil
}

func (m *media) remember(img store.Image) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.bytes+len(img.Data) > mediaCacheBytes {
		clear(m.cached)
		m.bytes = 0
	}
	if len(img.Data) <= mediaCacheBytes/4 {
		m.cached[img.SHA256] = img
		m.bytes += len(img.Data)
	}
}

// put checks data as an image for slot and keeps it, as actor. It returns
// the image's path (room.MediaPath), or an *imageError.
func (m *media) put(ctx context.Context, actor string, slot imageSlot, data []byte) (string, error) {
	select {
	case m.decoding <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	checked, err := checkImage(slot, data)
	<-m.decoding
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	img := store.Image{SHA256: hex.EncodeToString(sum[:]), ContentType: checked.contentType,
		Width: checked.width, Height: checked.height, Data: data, CreatedBy: actor}
	if err := m.store.PutImage(ctx, img); err != nil {
		return "", err
	}
	return room.MediaPath(img.SHA256, checked.ext), nil
}

// mediaFile is the last segment of an image's path: its SHA-256 in hex
// and its extension.
var mediaFile = regexp.MustCompile(`^([0-9a-f]{64})\.(png|jpg|gif|webp|ico)$`)

// serveMedia serves GET /media/{file}: an uploaded image, cached forever
// (its name is its content), with the type sniffed at upload.
func (s *Server) serveMedia(w http.ResponseWriter, r *http.Request) {
	t := messages(r)
	notFound := func() {
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusNotFound, Heading: t.TitleNoSuchPage, Message: t.NoSuchImage})
	}
	m := mediaFile.FindStringSubmatch(r.PathValue("file"))
	if m == nil || s.media == nil {
		notFound()
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	img, err := s.media.image(ctx, m[1])
	switch {
	case errors.Is(err, store.ErrNoImage):
		notFound()
		return
	case err != nil:
		s.log.Error("media: read image", "sha256", m[1], "err", err)
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusServiceUnavailable, Message: t.TroublePage, Retry: true})
		return
	}
	if imageTypes[img.ContentType].ext != m[2] {
		notFound() // the bytes are of another type than the name says
		return
	}
	etag := `"` + img.SHA256 + `"`
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", img.ContentType)
	h.Set("Content-Length", strconv.Itoa(len(img.Data)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(img.Data)
	}
}
