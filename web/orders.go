package web

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"waitingroom/server/order"
	"waitingroom/server/plaintext"
	"waitingroom/server/room"
	"waitingroom/views"
)

// placedOrders finds the order an entry token already placed (the order
// service); the order form uses it when it is sent twice.
type placedOrders interface {
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

// stockError is 409 insufficient_stock: the apiError and the stock left.
type stockError struct {
	apiError
	Left int64 `json:"left"`
}

// limitError is 400 over_limit: the apiError, the room's limit per buyer
// and how many the buyer may still order.
type limitError struct {
	apiError
	Limit int `json:"limit"`
	Left  int `json:"left"`
}

// limitText says, in t's language, how many of the room's limit per buyer
// the buyer may still order.
func limitText(t views.Messages, e *order.LimitError) string {
	if e.Left <= 0 {
		return views.Fill(t.ErrLimitReached, "n", strconv.Itoa(e.Limit))
	}
	return views.Fill(views.Fill(t.ErrOverLimit, "n", strconv.Itoa(e.Limit)), "left", strconv.Itoa(e.Left))
}

// placeOrderJSON serves POST /api/rooms/{room}/orders: the token in
// X-Entry-Token, the visitor in wr_vid.
func (s *Server) placeOrderJSON(w http.ResponseWriter, r *http.Request) {
	var body orderJSON
	if err := decodeJSON(r.Body, &body); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", "The request body is too large.")
			return
		}
		writeError(w, http.StatusBadRequest, "bad_json", `The body must be {"productId":1,"quantity":1}.`)
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
	if !validUTM(req.UTM) || len(req.IdempotencyKey) > maxIdempotencyKey || !plaintext.Valid(req.IdempotencyKey) {
		writeError(w, http.StatusBadRequest, "bad_request", "UTM values are at most 200 bytes of valid UTF-8 without control or bidirectional formatting characters, click ids (gclid, fbclid, ttclid) at most 512 bytes of A-Z a-z 0-9 - _ . ~ + / =, and the Idempotency-Key at most 128 bytes of plain text.")
		return
	}
	id, ok := s.visitorID(r)
	if !ok {
		if req.Token == "" {
			writeError(w, http.StatusUnauthorized, "token_missing", "An X-Entry-Token header is required.")
		} else {
			writeError(w, http.StatusUnauthorized, "token_invalid", "The entry token is not valid for this visitor (the wr_vid cookie is missing).")
		}
		return
	}
	req.Visitor = id
	perBuyer, err := s.orderRoom(r.Context(), req.Room)
	switch {
	case errors.Is(err, errGateOn):
		writeError(w, http.StatusConflict, "gate_on", "This room's orders are taken at its shop: a buyer whose turn it is continues there with a pass (POST /r/{room}/pass).")
		return
	case err != nil:
		s.fail(w, r, err)
		return
	}
	req.MaxPerBuyer = perBuyer
	o, err := s.orders.Place(r.Context(), req)
	if err != nil {
		s.orderFailJSON(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, o)
}

func (s *Server) orderFailJSON(w http.ResponseWriter, r *http.Request, err error) {
	var rl *order.RateLimitedError
	var wait *order.WaitError
	var short *order.StockError
	var over *order.LimitError
	switch {
	case errors.As(err, &over):
		// Over the room's limit per buyer: say how many are left, in the
		// visitor's language, and as numbers.
		t := s.roomText(r, r.PathValue("room"))
		writeJSON(w, http.StatusBadRequest, limitError{apiError: apiError{Code: "over_limit", Message: limitText(t, over)},
			Limit: over.Limit, Left: over.Left})
	case errors.As(err, &rl):
		writeErrorRetry(w, http.StatusTooManyRequests, rl.RetryAfter, "rate_limited", "Many orders are arriving; retry shortly. The entry token stays valid.")
	case errors.As(err, &wait) && errors.Is(err, order.ErrTokenPaused):
		writeErrorRetry(w, http.StatusTooManyRequests, wait.RetryAfter, "token_paused",
			"Too many order attempts with this entry token failed; retry after the pause. The entry token stays valid.")
	case errors.As(err, &wait):
		writeErrorRetry(w, http.StatusConflict, wait.RetryAfter, "token_in_use", "An order with this entry token is being processed.")
	case errors.Is(err, order.ErrTokenMissing):
		writeError(w, http.StatusUnauthorized, "token_missing", "An X-Entry-Token header is required.")
	case errors.Is(err, order.ErrTokenInvalid):
		writeError(w, http.StatusUnauthorized, "token_invalid", "The entry token is invalid, expired or not this visitor's.")
	case errors.Is(err, order.ErrTokenInUse):
		writeError(w, http.StatusConflict, "token_in_use", "An order with this entry token is being processed.")
	case errors.Is(err, order.ErrTokenUsed):
		writeError(w, http.StatusConflict, "token_used", "This entry token has already placed an order.")
	case errors.As(err, &short):
		// Some is left, less than asked: say how many, in the visitor's
		// language, and as a number.
		t := s.roomText(r, r.PathValue("room"))
		writeJSON(w, http.StatusConflict, stockError{apiError: apiError{Code: "insufficient_stock",
			Message: views.Fill(t.ErrFewLeft, "n", strconv.FormatInt(short.Left, 10))}, Left: short.Left})
	case errors.Is(err, order.ErrSoldOut):
		writeError(w, http.StatusConflict, "sold_out", "Sold out. The entry token stays valid.")
	case errors.Is(err, order.ErrProductRequired):
		writeError(w, http.StatusBadRequest, "product_required", "This room sells several products: name one with productId.")
	case errors.Is(err, order.ErrProductNotFound):
		writeError(w, http.StatusBadRequest, "product_not_found", "There is no such product in this room.")
	case errors.Is(err, order.ErrBadQuantity):
		writeError(w, http.StatusBadRequest, "bad_quantity", "quantity must be between 1 and "+strconv.Itoa(order.MaxQuantity)+".")
	default:
		s.log.Warn("order failed", "room", r.PathValue("room"), "err", err)
		writeError(w, http.StatusServiceUnavailable, "unavailable", "Orders are briefly unavailable. The entry token stays valid; retry in a moment.")
	}
}

func retrySeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// writeErrorRetry answers an error with Retry-After set to after, rounded
// up to whole seconds (writeError would set its own).
func writeErrorRetry(w http.ResponseWriter, status int, after time.Duration, code, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(after)))
	writeJSON(w, status, apiError{Code: code, Message: msg})
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
	req.UTM = attributionOf(f)
	utm := map[string]string{}
	for _, kv := range attributionValues(req.UTM) {
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
	switch {
	case errors.Is(err, errGateOn):
		s.orderError(w, r, http.StatusConflict, t.TitleNotPlaced, views.GateTextFor(t.Lang).OrdersAtShop, nil)
		return
	case err != nil:
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
	var rl *order.RateLimitedError
	var wait *order.WaitError
	var short *order.StockError
	var over *order.LimitError
	notPlaced := t.TitleNotPlaced
	switch {
	case errors.As(err, &over):
		s.orderError(w, r, http.StatusBadRequest, notPlaced, limitText(t, over), nil)
	case errors.As(err, &rl):
		secs := retrySeconds(rl.RetryAfter)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.orderError(w, r, http.StatusTooManyRequests, notPlaced, views.Fill(t.ErrRateLimited, "s", strconv.Itoa(secs)), retry)
	case errors.As(err, &wait) && errors.Is(err, order.ErrTokenPaused):
		secs := retrySeconds(wait.RetryAfter)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.orderError(w, r, http.StatusTooManyRequests, notPlaced, views.Fill(t.ErrTokenPaused, "s", strconv.Itoa(secs)), retry)
	case errors.Is(err, order.ErrTokenMissing), errors.Is(err, order.ErrTokenInvalid):
		// Most often a pass that ran out: say so, and offer to rejoin.
		s.htmlPage(w, r, views.ErrorPage{Status: http.StatusUnauthorized, Heading: t.Expired, Message: t.ErrTokenGone,
			Room: name, Rejoin: true})
	case errors.Is(err, order.ErrTokenUsed):
		// The form sent twice (a double click, the back button): show the
		// order the first one placed, not a failure.
		if po, ok := s.orders.(placedOrders); ok {
			if o, found := po.PlacedWith(r.Context(), name, req.Visitor, req.Token); found {
				w.Header().Set("Cache-Control", "no-store")
				http.Redirect(w, r, "/r/"+name+"/orders/"+o.PublicID, http.StatusSeeOther)
				return
			}
		}
		s.orderError(w, r, http.StatusConflict, notPlaced, t.ErrTokenUsed, nil)
	case errors.As(err, &wait):
		w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(wait.RetryAfter)))
		s.orderError(w, r, http.StatusConflict, notPlaced, t.ErrTokenInUse, retry)
	case errors.Is(err, order.ErrTokenInUse):
		s.orderError(w, r, http.StatusConflict, notPlaced, t.ErrTokenInUse, retry)
	case errors.As(err, &short):
		s.orderError(w, r, http.StatusConflict, notPlaced, views.Fill(t.ErrFewLeft, "n", strconv.FormatInt(short.Left, 10)), nil)
	case errors.Is(err, order.ErrSoldOut):
		s.orderError(w, r, http.StatusConflict, t.SoldOutTitle, t.ErrSoldOut, nil)
	case errors.Is(err, order.ErrProductRequired), errors.Is(err, order.ErrProductNotFound), errors.Is(err, order.ErrBadQuantity):
		s.orderError(w, r, http.StatusBadRequest, notPlaced, t.ErrBadOrder, nil)
	default:
		s.log.Warn("order failed", "room", name, "err", err)
		s.orderError(w, r, http.StatusServiceUnavailable, notPlaced, t.ErrUnavailable, retry)
	}
}

func (s *Server) orderError(w http.ResponseWriter, r *http.Request, status int, heading, msg string, retry *views.Retry) {
	s.htmlPage(w, r, views.ErrorPage{Status: status, Heading: heading, Message: msg, Room: r.PathValue("room"), RetryPost: retry.Repost(r.PathValue("room"))})
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
		writeError(w, http.StatusServiceUnavailable, "unavailable", "The product list is briefly unavailable.")
		return
	}
	if ps == nil {
		ps = []order.Product{}
	}
	writeJSON(w, http.StatusOK, ps)
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

// errGateOn refuses an order on the built-in order path of a room that
// sends its buyers to a shop (gate mode): its orders are taken there.
var errGateOn = errors.New("the room's orders are taken at its shop")

// orderRoom refuses, before the token is claimed or the order bucket
// touched, an order in a gate room (errGateOn); otherwise it returns the
// room's maxPerBuyer, which the order service holds the buyer's total to.
// It returns the error of reading the room (the order path fails closed).
func (s *Server) orderRoom(ctx context.Context, name string) (int, error) {
	set, err := s.rooms.Room(ctx, name)
	if err != nil {
		return 0, err
	}
	if s.handoffShop(set) != "" {
		return 0, errGateOn
	}
	return set.MaxPerBuyer, nil
}
