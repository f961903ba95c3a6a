package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"waitingroom/web/media"

	"waitingroom/server/order"
	"waitingroom/views"
)

// The console's products of a room: the list with the form that adds
// one, and the form of one product (edit, delete). Prices are typed in
// the currency's major unit ("12.50" USD) and stored in its smallest
// (1250), exactly: never through a float.

// parsePrice reads a price typed in the major unit of a currency of scale
// decimals ("129,000", "12.5", "12.50") into its smallest unit. It refuses
// signs, exponents, more decimals than the currency has, and amounts
// beyond order.MaxPrice.
func parsePrice(s string, scale int) (int64, bool) {
	s = strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	whole, frac, _ := strings.Cut(s, ".")
	if whole+frac == "" || len(frac) > scale {
		return 0, false
	}
	digits := whole + frac + strings.Repeat("0", scale-len(frac))
	if len(digits) > 18 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > order.MaxPrice {
		return 0, false
	}
	return n, true
}

// ProductValues writes p as the form shows it.
func ProductValues(p order.Product) views.ProductValues {
	return views.ProductValues{Name: p.Name, Price: views.PriceInput(p.Price, p.Currency), Currency: p.Currency,
		Stock: strconv.FormatInt(p.Stock, 10), ImageURL: p.ImageURL}
}

// parseProductForm reads a product form into a patch of every field, the
// values as typed, and the errors of the fields that do not parse.
func parseProductForm(f url.Values, t views.RoomsText) (order.ProductPatch, views.ProductValues, map[string]string) {
	get := func(k string) string {
		v := strings.TrimSpace(f.Get(k))
		if len(v) > maxFieldLen {
			v = v[:maxFieldLen]
		}
		return v
	}
	v := views.ProductValues{Name: get("name"), Price: get("price"), Currency: strings.ToUpper(get("currency")),
		Stock: get("stock"), ImageURL: get("imageURL")}
	errs := map[string]string{}
	p := order.ProductPatch{Name: &v.Name, Currency: &v.Currency, ImageURL: &v.ImageURL}
	switch {
	case !views.KnownCurrency(v.Currency):
		// The price's decimals depend on it: refused before the price.
		errs["currency"] = t.ErrProduct["currency"]
	case strings.HasPrefix(v.Currency, "X"):
		errs["currency"] = t.ErrCurrencyX // as the catalog refuses it
	}
	scale := views.CurrencyScale(v.Currency)
	if price, ok := parsePrice(v.Price, scale); ok {
		p.Price = &price
	} else {
		errs["price"] = views.Fill(t.ErrPrice, "n", strconv.Itoa(scale))
	}
	if stock, err := strconv.ParseInt(v.Stock, 10, 64); err == nil {
		p.Stock = &stock
	} else {
		errs["stock"] = t.ErrNotWhole
	}
	return p, v, errs
}

// productErrors turns a catalog refusal into the form's errors; it
// reports false for any other error.
func productErrors(err error, t views.RoomsText, errs map[string]string) bool {
	var invalid *order.InvalidProductError
	if !errors.As(err, &invalid) {
		return false
	}
	if invalid == media.ErrNotHere {
		errs[invalid.Field] = t.ErrImageMissing
		return true
	}
	msg, ok := t.ErrProduct[invalid.Field]
	if !ok {
		msg = invalid.Error()
	}
	errs[invalid.Field] = msg
	return true
}

// productsPage is the products page of room name, the product id's form
// when id > 0.
func (s *Console) productsPage(ctx context.Context, sess Session, name string) (views.ProductsPage, []order.Product, error) {
	if _, err := s.rooms.Room(ctx, name); err != nil {
		return views.ProductsPage{}, nil, err
	}
	st, err := s.rooms.Stats(ctx, name)
	if err != nil {
		return views.ProductsPage{}, nil, err
	}
	ps, err := s.catalog.AdminProducts(ctx, name)
	if err != nil {
		return views.ProductsPage{}, nil, err
	}
	pp := views.ProductsPage{Room: name, SoldOut: st.SoldOut, CSRF: sess.CSRF,
		Add: views.ProductForm{V: views.ProductValues{Currency: order.DefaultCurrency, Stock: "0"}}}
	for _, p := range ps {
		pp.Products = append(pp.Products, views.ProductRow{ID: p.ID, Name: p.Name, Price: p.Price, Currency: p.Currency, Stock: p.Stock, ImageURL: p.ImageURL})
	}
	return pp, ps, nil
}

// productNotice is the notice of the last change, from the redirect's
// query.
func productNotice(q url.Values, t views.RoomsText) string {
	var n []string
	switch q.Get("saved") {
	case "added":
		n = append(n, t.ProductAdded)
	case "1":
		n = append(n, t.ProductSaved)
	case "deleted":
		n = append(n, t.ProductDeleted)
	}
	if q.Get("restocked") == "1" {
		n = append(n, t.Restocked)
	}
	return strings.Join(n, " ")
}

func (s *Console) renderProducts(w http.ResponseWriter, r *http.Request, sess Session, status int, pp views.ProductsPage) {
	t := roomsText(r)
	pp.JS, pp.ImageKB = s.assetURL("console-products.js"), media.ProductSlot.MaxBytes>>10
	s.render(w, r, status, views.ConsoleProducts(s.consolePage(r, sess, views.Fill(t.ProductsTitle, "room", pp.Room), "rooms"), pp))
}

// consoleProductsReady answers 503 when no catalog is configured.
func (s *Console) consoleProductsReady(w http.ResponseWriter, r *http.Request) (string, bool) {
	if s.catalog == nil {
		s.Error(w, r, http.StatusServiceUnavailable, roomsText(r).ErrUnavailable)
		return "", false
	}
	return s.consoleRoomName(w, r)
}

// consoleProducts serves GET /admin/rooms/{room}/products.
func (s *Console) consoleProducts(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.consoleProductsReady(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	pp, _, err := s.productsPage(ctx, sess, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	pp.Notice = productNotice(r.URL.Query(), roomsText(r))
	s.renderProducts(w, r, sess, http.StatusOK, pp)
}

// soldOut reports room name's sold-out flag, false when it cannot tell.
func (s *Console) soldOut(ctx context.Context, name string) bool {
	st, err := s.rooms.Stats(ctx, name)
	return err == nil && st.SoldOut
}

// restocked is the query that says a write reopened a sold-out room.
func restocked(was, now bool) string {
	if was && !now {
		return "&restocked=1"
	}
	return ""
}

// consoleAddProduct serves POST /admin/rooms/{room}/products.
func (s *Console) consoleAddProduct(w http.ResponseWriter, r *http.Request, sess Session) {
	name, ok := s.consoleProductsReady(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	t := roomsText(r)
	pp, _, err := s.productsPage(ctx, sess, name)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	p, v, errs := parseProductForm(r.PostForm, t)
	s.productUpload(ctx, r, sess.Operator, &p, &v.ImageURL, errs)
	pp.Add = views.ProductForm{V: v, Errors: errs}
	if len(errs) == 0 {
		was := pp.SoldOut
		_, err = s.productWrites.Add(ctx, sess.Operator, name, p)
		switch {
		case err == nil:
			http.Redirect(w, r, "/admin/rooms/"+name+"/products?saved=added"+restocked(was, s.soldOut(ctx, name)), http.StatusSeeOther)
			return
		case !productErrors(err, t, errs):
			s.consoleFail(w, r, err)
			return
		}
	}
	pp.Add.Error = t.FixErrors
	s.renderProducts(w, r, sess, http.StatusUnprocessableEntity, pp)
}

// consoleProductID reads the {id} of a console path: a positive integer.
func consoleProductID(r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	return id, err == nil && id > 0
}

// consoleProductTarget is the room and product of a product page's path;
// it answers the request itself (not ready, or no such product) when it
// returns false.
func (s *Console) consoleProductTarget(w http.ResponseWriter, r *http.Request) (string, int64, bool) {
	name, ok := s.consoleProductsReady(w, r)
	if !ok {
		return "", 0, false
	}
	id, ok := consoleProductID(r)
	if !ok {
		s.Error(w, r, http.StatusNotFound, roomsText(r).ErrNoProduct)
		return "", 0, false
	}
	return name, id, true
}

// productEdit is the products page with product id's form, or
// order.ErrProductNotFound.
func (s *Console) productEdit(ctx context.Context, sess Session, name string, id int64) (views.ProductsPage, error) {
	pp, ps, err := s.productsPage(ctx, sess, name)
	if err != nil {
		return views.ProductsPage{}, err
	}
	for _, p := range ps {
		if p.ID == id {
			pp.Edit = &views.ProductForm{ID: id, V: ProductValues(p), Image: p.ImageURL, Errors: map[string]string{}}
			return pp, nil
		}
	}
	return views.ProductsPage{}, order.ErrProductNotFound
}

// consoleProduct serves GET /admin/rooms/{room}/products/{id}.
func (s *Console) consoleProduct(w http.ResponseWriter, r *http.Request, sess Session) {
	name, id, ok := s.consoleProductTarget(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	pp, err := s.productEdit(ctx, sess, name, id)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	pp.Notice = productNotice(r.URL.Query(), roomsText(r))
	s.renderProducts(w, r, sess, http.StatusOK, pp)
}

// consoleChangeProduct serves POST /admin/rooms/{room}/products/{id}:
// op=delete deletes the product, anything else saves the form.
func (s *Console) consoleChangeProduct(w http.ResponseWriter, r *http.Request, sess Session) {
	name, id, ok := s.consoleProductTarget(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	t := roomsText(r)
	pp, err := s.productEdit(ctx, sess, name, id)
	if err != nil {
		s.consoleFail(w, r, err)
		return
	}
	if r.PostForm.Get("op") == "delete" {
		err := s.productWrites.Remove(ctx, sess.Operator, name, id)
		switch {
		case err == nil:
			http.Redirect(w, r, "/admin/rooms/"+name+"/products?saved=deleted", http.StatusSeeOther)
		case errors.Is(err, order.ErrProductHasOrders):
			pp.Edit.Error = t.ErrHasOrders
			s.renderProducts(w, r, sess, http.StatusConflict, pp)
		default:
			s.consoleFail(w, r, err)
		}
		return
	}
	p, v, errs := parseProductForm(r.PostForm, t)
	s.productUpload(ctx, r, sess.Operator, &p, &v.ImageURL, errs)
	pp.Edit.V, pp.Edit.Errors = v, errs
	if len(errs) == 0 {
		was := pp.SoldOut
		_, err := s.productWrites.Change(ctx, sess.Operator, name, id, p)
		switch {
		case err == nil:
			http.Redirect(w, r, "/admin/rooms/"+name+"/products/"+strconv.FormatInt(id, 10)+"?saved=1"+restocked(was, s.soldOut(ctx, name)), http.StatusSeeOther)
			return
		case !productErrors(err, t, errs):
			s.consoleFail(w, r, err)
			return
		}
	}
	pp.Edit.Error = t.FixErrors
	s.renderProducts(w, r, sess, http.StatusUnprocessableEntity, pp)
}

// productUpload keeps the image file posted with a product form, if any,
// in place of the typed address (p's, and typed, the form's value); a
// refused file is said at the image's field, in the operator's language.
func (s *Console) productUpload(ctx context.Context, r *http.Request, actor string, p *order.ProductPatch, typed *string, errs map[string]string) {
	path, has, refused := s.keepUpload(ctx, r, actor, media.ProductSlot)
	switch {
	case refused != "":
		errs[media.ProductSlot.Field] = ProductImageRefusal(Lang(r), refused)
	case has:
		*typed = path
		p.ImageURL = &path
	}
}

// ProductImageRefusal words the refusal code of a product image's upload
// in lang.
func ProductImageRefusal(lang, code string) string {
	switch code {
	case media.RefusedType:
		return views.RoomsTextFor(lang).ErrImageType
	case media.RefusedNotKept:
		return views.BrandingTextFor(lang).ErrNoImage
	}
	return ImageRefusal(views.BrandingTextFor(lang).ErrImage, media.ProductSlot, code)
}

// ProductBodyMax bounds a product form: its image at its limit, and the
// text fields.
func ProductBodyMax() int64 { return int64(media.ProductSlot.MaxBytes) + FormBodyMax }

// productTooLarge answers a product form over ProductBodyMax: the form
// as saved (the body was cut, so nothing typed can be kept) with the
// image's limit at its field. It changes nothing.
func (s *Console) productTooLarge(w http.ResponseWriter, r *http.Request) {
	sess, err := s.session(r)
	if err != nil {
		s.Error(w, r, http.StatusRequestEntityTooLarge, consoleText(r).ErrTooLarge)
		return
	}
	name, ok := s.consoleProductsReady(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
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
