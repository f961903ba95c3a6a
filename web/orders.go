package web

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"strconv"

	"waitingroom/server/order"
	"waitingroom/server/plaintext"
	"waitingroom/server/room"
	"waitingroom/views"
	"waitingroom/web/request"
	"waitingroom/web/response"
)

// PlacedOrders finds the order an entry token already placed (the order
// service); the order form uses it when it is sent twice.
type PlacedOrders interface {
	PlacedWith(ctx context.Context, room, visitor, token string) (order.Order, bool)
}

// maxIdempotencyKey bounds the Idempotency-Key header.
const maxIdempotencyKey = 128

// orderJSON is the JSON order body.
type orderJSON struct {
	ProductID int64 `json:"productId"`
	Quantity  *int  `json:"quantity"`
	UTM       *struct {
		Source   string `json:"source"`
		Medium   string `json:"medium"`
		Campaign string `json:"campaign"`
		Term     string `json:"term"`
		Content  string `json:"content"`
		Gclid    string `json:"gclid"`
		Fbclid   string `json:"fbclid"`
		Ttclid   string `json:"ttclid"`
	} `json:"utm"`
}

// placeOrderJSON serves POST /api/rooms/{room}/orders: the token in
// X-Entry-Token, the visitor in wr_vid.
func (s *Server) placeOrderJSON(w http.ResponseWriter, r *http.Request) {
	var body orderJSON
	if err := request.DecodeJSON(r.Body, &body); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			response.WriteError(w, http.StatusRequestEntityTooLarge, "body_too_large", "The request body is too large.")
			return
		}
		response.WriteError(w, http.StatusBadRequest, "bad_json", `The body must be {"productId":1,"quantity":1}.`)
		return
	}
	req := order.Request{Room: r.PathValue("room"), Token: r.Header.Get("X-Entry-Token"), ProductID: body.ProductID, Quantity: 1,
		IdempotencyKey: r.Header.Get("Idempotency-Key")}
	if body.Quantity != nil {
		req.Quantity = *body.Quantity
	}
	if body.UTM != nil {
		req.UTM = order.UTM{Source: body.UTM.Source, Medium: body.UTM.Medium, Campaign: body.UTM.Campaign, Term: body.UTM.Term, Content: body.UTM.Content,
			Gclid: body.UTM.Gclid, Fbclid: body.UTM.Fbclid, Ttclid: body.UTM.Ttclid}
	}
	req.UTM = orderUTM(r, req.UTM)
	if !request.ValidUTM(req.UTM) || len(req.IdempotencyKey) > maxIdempotencyKey || !plaintext.Valid(req.IdempotencyKey) {
		response.WriteError(w, http.StatusBadRequest, "bad_request", "UTM values are at most 200 bytes of valid UTF-8 without control or bidirectional formatting characters, click ids (gclid, fbclid, ttclid) at most 512 bytes of A-Z a-z 0-9 - _ . ~ + / =, and the Idempotency-Key at most 128 bytes of plain text.")
		return
	}
	id, ok := s.visitorID(r)
	if !ok {
		if req.Token == "" {
			response.WriteError(w, http.StatusUnauthorized, "token_missing", "An X-Entry-Token header is required.")
		} else {
			response.WriteError(w, http.StatusUnauthorized, "token_invalid", "The entry token is not valid for this visitor (the wr_vid cookie is missing).")
		}
		return
	}
	req.Visitor = id
	perBuyer, err := s.orderRoom(r.Context(), req.Room)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	req.MaxPerBuyer = perBuyer
	o, err := s.orders.Place(r.Context(), req)
	if err != nil {
		s.respond().JSON(w, r, response.ScopeOrder, err)
		return
	}
	response.WriteJSON(w, http.StatusCreated, o)
}

// placeOrderForm serves POST /r/{room}/order, the page's order form: on
// success it redirects to the confirmation; on failure it shows a clear
// page, with a retry button where a retry can succeed.
func (s *Server) placeOrderForm(w http.ResponseWriter, r *http.Request) {
	name, t, ok := s.postedRoomForm(w, r, func(t views.Messages) string { return t.ErrBadOrder })
	if !ok {
		return
	}
	f := r.PostForm
	req := order.Request{Room: name, Token: f.Get("entry_token"), Quantity: 1}
	var bad bool
	if v := f.Get("quantity"); v != "" {
		n, err := strconv.Atoi(v)
		req.Quantity, bad = n, err != nil
	}
	if v := f.Get("product_id"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		req.ProductID, bad = n, bad || err != nil || n <= 0
	}
	// The form's utm_* and click id fields come from the page's address:
	// one that is not valid is dropped, never a reason to refuse the order.
	req.UTM = request.AttributionOf(f)
	utm := map[string]string{}
	for _, kv := range request.AttributionValues(req.UTM) {
		if kv[1] != "" {
			utm[kv[0]] = kv[1]
		}
	}
	req.UTM = orderUTM(r, req.UTM) // the join's attribution when the page lost the link's
	retry := &views.Retry{Token: req.Token, ProductID: req.ProductID, Quantity: req.Quantity, UTM: utm}
	if bad {
		s.htmlError(w, r, http.StatusBadRequest, t.ErrBadOrder, name, false)
		return
	}
	if id, ok := s.visitorID(r); ok {
		req.Visitor = id
	} else {
		req.Token = "" // no visitor to bind it to
	}
	perBuyer, err := s.orderRoom(r.Context(), name)
	if err != nil {
		s.htmlFail(w, r, err, name)
		return
	}
	req.MaxPerBuyer = perBuyer
	o, err := s.orders.Place(r.Context(), req)
	if err == nil {
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, "/r/"+name+"/orders/"+o.PublicID, http.StatusSeeOther)
		return
	}
	// The form sent twice (a double click, the back button): show the
	// order the first one placed, not a failure.
	if s.placed != nil && errors.Is(err, order.ErrTokenUsed) {
		if o, found := s.placed.PlacedWith(r.Context(), name, req.Visitor, req.Token); found {
			w.Header().Set("Cache-Control", "no-store")
			http.Redirect(w, r, "/r/"+name+"/orders/"+o.PublicID, http.StatusSeeOther)
			return
		}
	}
	s.respond().HTML(w, r, err, response.PageOptions{Scope: response.ScopeOrder, Room: name, Repost: retry.Repost(name)})
}

// confirmation serves GET /r/{room}/orders/{id}, to the visitor who placed
// the order only.
func (s *Server) confirmation(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	id := r.PathValue("id")
	visitor, ok := s.visitorID(r)
	t := s.roomText(r, roomOfPath(r.URL.Path))
	if !room.ValidName(name) || !order.ValidPublicID(id) || !ok {
		s.htmlError(w, r, http.StatusNotFound, t.NoSuchOrder, "", false)
		return
	}
	o, err := s.orders.Get(r.Context(), name, visitor, id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		s.htmlError(w, r, http.StatusNotFound, t.NoSuchOrder, name, false)
		return
	case err != nil:
		s.htmlError(w, r, http.StatusServiceUnavailable, t.ErrUnavailable, name, true)
		return
	}
	page := views.ConfirmPage{Room: name, Title: name, T: t, Assets: s.pageAssets(),
		OrderID: o.PublicID, Product: "#" + strconv.FormatInt(o.ProductID, 10), Quantity: o.Quantity}
	if set, err := s.rooms.Room(r.Context(), name); err == nil {
		page.Title, page.ShopURL, page.Assets.Icon = set.Title, set.ShopURL, set.Favicon
		page.Brand = brandOf(name, set.Title, set.ShopURL, set.Branding)
	}
	if ps, err := s.orders.Products(r.Context(), name); err == nil {
		for _, p := range ps {
			if p.ID == o.ProductID {
				page.Product, page.Price, page.Currency = p.Name, p.Price, p.Currency
			}
		}
	}
	if o.UnitPrice >= 0 { // the price the order was placed at
		page.Price, page.Currency = o.UnitPrice, o.Currency
	}
	w.Header().Set("Cache-Control", "no-store")
	s.render(w, r, http.StatusOK, views.Confirm(page))
}

// products serves GET /api/rooms/{room}/products.
func (s *Server) products(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("room")
	if _, err := s.rooms.Room(r.Context(), name); err != nil {
		s.fail(w, r, err)
		return
	}
	ps, err := s.orders.Products(r.Context(), name)
	if err != nil {
		response.WriteError(w, http.StatusServiceUnavailable, "unavailable", "The product list is briefly unavailable.")
		return
	}
	if ps == nil {
		ps = []order.Product{}
	}
	response.WriteJSON(w, http.StatusOK, ps)
}

// viewProducts lists room's products for a page, each with the largest
// quantity one order may take (the stock, maxPerBuyer when set, and
// order.MaxQuantity); the page still renders, without them, when the
// database is down.
func (s *Server) viewProducts(r *http.Request, name string, maxPerBuyer int) []views.Product {
	ps, err := s.orders.Products(r.Context(), name)
	if err != nil {
		return nil
	}
	out := make([]views.Product, len(ps))
	for i, p := range ps {
		out[i] = views.Product{ID: p.ID, Name: p.Name, Price: p.Price, Currency: p.Currency, ImageURL: p.ImageURL,
			Max: int(min(p.Stock, int64(orderLimit(maxPerBuyer))))}
	}
	return out
}

// orderLimit is the largest quantity of one order in a room whose
// maxPerBuyer is perBuyer (0: order.MaxQuantity alone).
func orderLimit(perBuyer int) int {
	if perBuyer > 0 {
		return min(perBuyer, order.MaxQuantity)
	}
	return order.MaxQuantity
}

// orderRoom refuses, before the token is claimed or the order bucket
// touched, an order in a gate room (order.ErrAtShop); otherwise it returns the
// room's maxPerBuyer, which the order service holds the buyer's total to.
// It returns the error of reading the room (the order path fails closed).
func (s *Server) orderRoom(ctx context.Context, name string) (int, error) {
	set, err := s.rooms.Room(ctx, name)
	if err != nil {
		return 0, err
	}
	if s.handoffShop(set) != "" {
		return 0, order.ErrAtShop
	}
	return set.MaxPerBuyer, nil
}
