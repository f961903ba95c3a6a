package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"waitingroom/web/media"

	"waitingroom/server/order"
	"waitingroom/views"
	"waitingroom/web/response"
)

// A product's image is an https:// address on another site, a path on
// this site that names an image it serves, or a file uploaded with the
// console's product form (kept like the branding's images, and named by
// its /media/ path). Remote addresses are not fetched: the console's
// preview says when one does not load.

// errImageNotHere refuses a product image path on this site that names
// no image it serves.
var errImageNotHere = &order.InvalidProductError{Field: "imageURL",
	Reason: "names no image on this server: give the path of an uploaded image (/media/…) or of a static image, or an https:// address"}

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

// checkProductImage returns errImageNotHere for a path on this site that
// names no image here; an https:// address, or anything the catalog
// refuses on its own, passes.
func (s *Server) checkProductImage(ctx context.Context, u string) error {
	if !strings.HasPrefix(u, "/") || strings.HasPrefix(u, "//") || s.hasLocalImage(ctx, u) {
		return nil
	}
	return errImageNotHere
}

// productUpload keeps the image file posted with a product form, if any,
// in place of the typed address (p's, and typed, the form's value); a
// refused file is said at the image's field, in the operator's language.
func (s *Server) productUpload(ctx context.Context, r *http.Request, actor string, p *order.ProductPatch, typed *string, errs map[string]string) {
	path, has, refused := s.keepUpload(ctx, r, actor, media.ProductSlot)
	switch {
	case refused != "":
		errs[media.ProductSlot.Field] = productImageRefusal(consoleLang(r), refused)
	case has:
		*typed = path
		p.ImageURL = &path
	}
}

// productImageRefusal words the refusal code of a product image's upload
// in lang.
func productImageRefusal(lang, code string) string {
	switch code {
	case media.RefusedType:
		return views.RoomsTextFor(lang).ErrImageType
	case media.RefusedNotKept:
		return views.BrandingTextFor(lang).ErrNoImage
	}
	return imageRefusal(views.BrandingTextFor(lang).ErrImage, media.ProductSlot, code)
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
		response.WriteError(w, http.StatusRequestEntityTooLarge, "image_refused", productImageRefusal("en", media.RefusedTooLarge))
		return
	case err != nil:
		response.WriteError(w, http.StatusBadRequest, "bad_body", "The image could not be read.")
		return
	}
	path, err := s.images.Put(ctx, apiActor, media.ProductSlot, data)
	var bad *media.RefusedError
	switch {
	case errors.As(err, &bad):
		response.WriteError(w, http.StatusUnprocessableEntity, "image_refused", productImageRefusal("en", bad.Code))
		return
	case err != nil:
		s.log.Error("admin: keep image", "err", err)
		response.WriteError(w, http.StatusServiceUnavailable, "unavailable", "The image database is briefly unavailable. Please retry in a moment.")
		return
	}
	s.log.Info("image uploaded", "by", apiActor, "path", path)
	response.WriteJSON(w, http.StatusCreated, map[string]string{"path": path})
}

// productBodyMax bounds a product form: its image at its limit, and the
// text fields.
var productBodyMax = int64(media.ProductSlot.MaxBytes) + consoleBodyMax

// productTooLarge answers a product form over productBodyMax: the form
// as saved (the body was cut, so nothing typed can be kept) with the
// image's limit at its field. It changes nothing.
func (s *Server) productTooLarge(w http.ResponseWriter, r *http.Request) {
	sess, err := s.session(r)
	if err != nil {
		s.consoleError(w, r, http.StatusRequestEntityTooLarge, consoleText(r).ErrTooLarge)
		return
	}
	name, ok := s.consoleProductsReady(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
	defer cancel()
	var pp views.ProductsPage
	form := &pp.Add
	if r.PathValue("id") == "" {
		pp, _, err = s.productsPage(ctx, sess, name)
	} else if id, ok := consoleProductID(r); ok {
		pp, err = s.productEdit(ctx, sess, name, id)
		form = pp.Edit
	} else {
		err = order.ErrProductNotFound
	}
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	msg := views.Fill(roomsText(r).ErrImageTooLarge, "kb", strconv.Itoa(media.ProductSlot.MaxBytes>>10))
	form.Error, form.Errors = msg, map[string]string{media.ProductSlot.Field: msg}
	s.renderProducts(w, r, sess, http.StatusRequestEntityTooLarge, pp)
}
