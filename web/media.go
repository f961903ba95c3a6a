package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"waitingroom/server/store"
	"waitingroom/views"
	"waitingroom/web/media"
)

// serveMedia serves GET /media/{file}: an uploaded image, cached forever
// (its name is its content), with the type sniffed at upload.
func (s *Server) serveMedia(w http.ResponseWriter, r *http.Request) {
	t := messages(r)
	notFound := func() {
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusNotFound, Heading: t.TitleNoSuchPage, Message: t.NoSuchImage})
	}
	sum, ext, ok := media.ParseFile(r.PathValue("file"))
	if !ok || s.images == nil {
		notFound()
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	img, err := s.images.Image(ctx, sum)
	switch {
	case errors.Is(err, store.ErrNoImage):
		notFound()
		return
	case err != nil:
		if !errors.Is(err, media.ErrBusy) && r.Context().Err() == nil {
			s.log.Error("media: read image", "sha256", sum, "err", err)
		}
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusServiceUnavailable, Message: t.TroublePage, Retry: true})
		return
	}
	if media.Ext(img.ContentType) != ext {
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
