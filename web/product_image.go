package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"waitingroom/web/console"
	"waitingroom/web/media"

	"waitingroom/web/response"
)

// A product's image is an https:// address on another site, a path on
// this site that names an image it serves, or a file uploaded with the
// console's product form (kept like the branding's images, and named by
// its /media/ path). Remote addresses are not fetched: the console's
// preview says when one does not load.

// hasLocalImage reports whether path names an image this site serves: an
// uploaded one (/media/…) or a static image file at its fingerprinted
// URL (/static/…).
func (s *Server) hasLocalImage(ctx context.Context, path string) bool {
	if strings.HasPrefix(path, "/static/") {
		a := s.assets.byURL[path]
		return a != nil && strings.HasPrefix(a.ctype, "image/")
	}
	return s.images.Has(ctx, path)
}

// checkProductImage returns media.ErrNotHere for a path on this site that
// names no image here; an https:// address, or anything the catalog
// refuses on its own, passes.
func (s *Server) checkProductImage(ctx context.Context, u string) error {
	if !strings.HasPrefix(u, "/") || strings.HasPrefix(u, "//") || s.hasLocalImage(ctx, u) {
		return nil
	}
	return media.ErrNotHere
}

// uploadImage serves POST /api/admin/media: the body is an image, checked
// and kept as the console's product form keeps its uploads; 201
// {"path":"/media/…"}, the path to give as a product's imageURL.
func (s *Server) uploadImage(w http.ResponseWriter, r *http.Request) {
	w.Header()["Cache-Control"] = noStore
	if s.images == nil {
		response.WriteError(w, http.StatusServiceUnavailable, "unavailable", "This server keeps no images: it has no database.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(media.ProductSlot.MaxBytes)))
	var over *http.MaxBytesError
	switch {
	case errors.As(err, &over):
		response.WriteError(w, http.StatusRequestEntityTooLarge, "image_refused", console.ProductImageRefusal("en", media.RefusedTooLarge))
		return
	case err != nil:
		response.WriteError(w, http.StatusBadRequest, "bad_body", "The image could not be read.")
		return
	}
	path, err := s.images.Put(ctx, apiActor, media.ProductSlot, data)
	var bad *media.RefusedError
	switch {
	case errors.As(err, &bad):
		response.WriteError(w, http.StatusUnprocessableEntity, "image_refused", console.ProductImageRefusal("en", bad.Code))
		return
	case err != nil:
		s.log.Error("admin: keep image", "err", err)
		response.WriteError(w, http.StatusServiceUnavailable, "unavailable", "The image database is briefly unavailable. Please retry in a moment.")
		return
	}
	s.log.Info("image uploaded", "by", apiActor, "path", path)
	response.WriteJSON(w, http.StatusCreated, map[string]string{"path": path})
}
