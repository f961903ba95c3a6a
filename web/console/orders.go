package console

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"waitingroom/server/audit"
	"waitingroom/server/order"
	"waitingroom/server/plaintext"
	"waitingroom/server/room"
	"waitingroom/views"
)

// Orders is the order database as the console's orders and
// attribution pages use it (server/order's Service).
type Orders interface {
	ListOrders(ctx context.Context, f order.OrderFilter) ([]order.OrderRow, error)
	ExportOrders(ctx context.Context, f order.OrderFilter, w io.Writer) error
	CancelOrder(ctx context.Context, room, publicID string) (order.OrderRow, error)
	CampaignSales(ctx context.Context, room string) ([]order.CampaignSale, error)
	OrderRooms(ctx context.Context) ([]string, error)
}

// OrdersPageSize is how many orders one page of the console lists.
const OrdersPageSize = 50

// exportTimeout bounds one CSV export.
const exportTimeout = 5 * time.Minute

// ordersQuery is the orders page's query: the form as typed, and the
// filter it means.
type ordersQuery struct {
	form   views.OrdersFilter
	filter order.OrderFilter
	loc    *time.Location
	zone   string // the zone's name
}

// shownFormValue returns a query value fit to show again in the form: at most
// max bytes of plain text, "" otherwise.
func shownFormValue(q url.Values, key string, max int) string {
	v := q.Get(key)
	if len(v) > max || !plaintext.Valid(v) {
		return ""
	}
	return v
}

// parseOrdersQuery reads the filters of r. It returns the message that
// refuses them, in the operator's language, or "".
func parseOrdersQuery(r *http.Request, t views.OrdersText) (ordersQuery, string) {
	q := r.URL.Query()
	var oq ordersQuery
	loc, zone, zoneOK := consoleZone(r)
	oq.loc, oq.zone = loc, zone
	oq.form = views.OrdersFilter{
		Room: shownFormValue(q, "room", room.MaxNameLen), From: shownFormValue(q, "from", 32), To: shownFormValue(q, "to", 32),
		Status: shownFormValue(q, "status", 16), Source: shownFormValue(q, "utm_source", order.MaxUTMFilter),
		Medium: shownFormValue(q, "utm_medium", order.MaxUTMFilter), Campaign: shownFormValue(q, "utm_campaign", order.MaxUTMFilter),
		TZ: zone,
	}
	f := order.OrderFilter{Room: q.Get("room"), Status: q.Get("status"), Source: q.Get("utm_source"),
		Medium: q.Get("utm_medium"), Campaign: q.Get("utm_campaign")}
	if !zoneOK {
		return oq, t.ErrBadZone
	}
	var ok bool
	if f.From, ok = parseLocalTime(q.Get("from"), loc); !ok {
		return oq, views.Fill(t.ErrBadTime, "field", t.From)
	}
	if f.To, ok = parseLocalTime(q.Get("to"), loc); !ok {
		return oq, views.Fill(t.ErrBadTime, "field", t.To)
	}
	if a := q.Get("after"); a != "" {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return oq, t.ErrBadPage
		}
		f.AfterID = id
	}
	oq.filter = f
	var inv *order.InvalidFilterError
	if err := f.Validate(); errors.As(err, &inv) {
		switch inv.Field {
		case "room":
			return oq, t.ErrBadRoom
		case "to":
			return oq, t.ErrToBeforeFrom
		case "status":
			return oq, t.ErrBadStatus
		case "utm_source":
			return oq, views.Fill(t.ErrBadUTM, "field", t.Source)
		case "utm_medium":
			return oq, views.Fill(t.ErrBadUTM, "field", t.Medium)
		case "utm_campaign":
			return oq, views.Fill(t.ErrBadUTM, "field", t.Campaign)
		}
		return oq, t.ErrBadPage
	}
	return oq, ""
}

// values is the query string of the filters (without the page), to link
// to the next page, the CSV export, or back after a cancel.
func (oq ordersQuery) values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"room": oq.form.Room, "from": oq.form.From, "to": oq.form.To,
		"status": oq.form.Status, "utm_source": oq.form.Source, "utm_medium": oq.form.Medium,
		"utm_campaign": oq.form.Campaign} {
		if s != "" {
			v.Set(k, s)
		}
	}
	if oq.zone != defaultZone {
		v.Set("tz", oq.zone)
	}
	return v
}

// ordersText is the orders, attribution and audit texts in the operator's
// language.
func ordersText(r *http.Request) views.OrdersText { return views.OrdersTextFor(Lang(r)) }

// ordersPage lists the orders of the filters, a page at a time.
func (s *Console) ordersPage(w http.ResponseWriter, r *http.Request, sess Session) {
	t := ordersText(r)
	co := s.orderAdmin
	if co == nil {
		s.Error(w, r, http.StatusServiceUnavailable, t.ErrNoOrders)
		return
	}
	ctx := r.Context()
	oq, msg := parseOrdersQuery(r, t)
	v := views.OrdersView{Filter: oq.form, Zone: zoneLabel(oq.zone, oq.loc), CSRF: sess.CSRF}
	rooms, err := s.consoleRooms(ctx, co)
	if err != nil {
		s.Error(w, r, http.StatusServiceUnavailable, consoleText(r).ErrUnavailable)
		return
	}
	v.Rooms = roomChoices(rooms, oq.form.Room)
	page := s.consolePage(r, sess, t.OrdersTitle, "orders")
	if msg != "" {
		v.Error = msg
		s.render(w, r, http.StatusBadRequest, views.ConsoleOrders(page, v))
		return
	}
	f := oq.filter
	f.Limit = OrdersPageSize + 1
	rows, err := co.ListOrders(ctx, f)
	if err != nil {
		s.Error(w, r, http.StatusServiceUnavailable, consoleText(r).ErrUnavailable)
		return
	}
	vals := oq.values()
	v.Back = vals.Encode()
	v.CSVURL = "/admin/orders.csv" + pathQuery(vals)
	if len(rows) > OrdersPageSize {
		rows = rows[:OrdersPageSize]
		next := oq.values()
		next.Set("after", strconv.FormatInt(rows[len(rows)-1].ID, 10))
		v.NextURL = "/admin/orders" + pathQuery(next)
	}
	if f.AfterID > 0 {
		v.FirstURL = "/admin/orders" + pathQuery(vals)
	}
	if id := r.URL.Query().Get("cancelled"); id != "" && order.ValidPublicID(id) {
		v.Notice = views.Fill(t.OrderCancelled, "id", id)
	}
	lang := Lang(r)
	for _, o := range rows {
		l := views.OrderLine{PublicID: o.PublicID, Room: o.Room, Product: o.ProductName, Quantity: o.Quantity,
			Cancelled: o.Status == order.StatusCancelled, Source: o.Source, Medium: o.Medium, Campaign: o.Campaign,
			Term: o.Term, Content: o.Content, Gclid: o.Gclid, Fbclid: o.Fbclid, Ttclid: o.Ttclid, At: views.ConsoleTime(o.CreatedAt, oq.loc, lang),
			AtISO: o.CreatedAt.UTC().Format(time.RFC3339)}
		if o.UnitPrice >= 0 {
			l.UnitPrice = views.FormatPrice(o.UnitPrice, o.Currency, lang)
			l.Amount = views.FormatPrice(o.Amount(), o.Currency, lang)
		}
		v.Lines = append(v.Lines, l)
	}
	s.render(w, r, http.StatusOK, views.ConsoleOrders(page, v))
}

// pathQuery is "?" and v encoded, or "" when v is empty.
func pathQuery(v url.Values) string {
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// roomChoices returns rooms with selected among them (a valid room name
// that has no orders yet is still a choice).
func roomChoices(rooms []string, selected string) []string {
	if selected == "" || !room.ValidName(selected) {
		return rooms
	}
	for _, r := range rooms {
		if r == selected {
			return rooms
		}
	}
	return append([]string{selected}, rooms...)
}

// utf8BOM starts the CSV export, so that Excel reads it as UTF-8 (Korean
// product names and campaigns).
const utf8BOM = "\ufeff"

// csvResponse writes the CSV export's headers and BOM on its first
// write, so that a failure before any row still gets an error page.
type csvResponse struct {
	w        http.ResponseWriter
	filename string
	started  bool
}

func (c *csvResponse) Write(p []byte) (int, error) {
	if !c.started {
		c.started = true
		h := c.w.Header()
		h.Set("Content-Type", "text/csv; charset=utf-8")
		h.Set("Content-Disposition", `attachment; filename="`+c.filename+`"`)
		h.Set("X-Content-Type-Options", "nosniff")
		c.w.WriteHeader(http.StatusOK)
		if _, err := io.WriteString(c.w, utf8BOM); err != nil {
			return 0, err
		}
	}
	return c.w.Write(p)
}

// csvFilename names an export: "orders-<room>-<UTC time>.csv", of
// characters safe in a Content-Disposition header (room names are
// [a-z0-9-]).
func csvFilename(roomName string, now time.Time) string {
	if roomName == "" || !room.ValidName(roomName) {
		roomName = "all"
	}
	return "orders-" + roomName + "-" + now.UTC().Format("20060102-150405") + ".csv"
}

// ordersCSV exports every order of the filters as CSV, streamed.
func (s *Console) ordersCSV(w http.ResponseWriter, r *http.Request, sess Session) {
	t := ordersText(r)
	co := s.orderAdmin
	if co == nil {
		s.Error(w, r, http.StatusServiceUnavailable, t.ErrNoOrders)
		return
	}
	oq, msg := parseOrdersQuery(r, t)
	if msg != "" {
		s.Error(w, r, http.StatusBadRequest, msg)
		return
	}
	// A long export may outlast the server's write timeout.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(exportTimeout))
	ctx := r.Context()
	out := &csvResponse{w: w, filename: csvFilename(oq.filter.Room, time.Now())}
	err := co.ExportOrders(ctx, oq.filter, out)
	switch {
	case err == nil:
		if !out.started { // nothing was written: not even a header (never happens)
			out.Write(nil)
		}
		s.log.Info("console: orders exported", "operator", sess.Operator, "room", oq.filter.Room)
	case !out.started:
		s.Error(w, r, http.StatusServiceUnavailable, consoleText(r).ErrUnavailable)
	default:
		// Midway: abort the response, so the download fails rather than
		// ending short as if complete.
		s.log.Warn("console: orders export cut short", "operator", sess.Operator, "room", oq.filter.Room, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// cancelOrder cancels a placed order and gives its stock back.
func (s *Console) cancelOrder(w http.ResponseWriter, r *http.Request, sess Session) {
	t := ordersText(r)
	co := s.orderAdmin
	if co == nil {
		s.Error(w, r, http.StatusServiceUnavailable, t.ErrNoOrders)
		return
	}
	id, roomName := r.PathValue("id"), r.PostForm.Get("room")
	if !room.ValidName(roomName) {
		s.Error(w, r, http.StatusBadRequest, t.ErrBadRoom)
		return
	}
	if !order.ValidPublicID(id) {
		s.Error(w, r, http.StatusNotFound, t.ErrOrderNotFound)
		return
	}
	ctx := r.Context()
	o, err := co.CancelOrder(ctx, roomName, id)
	switch {
	case err == nil:
	case errors.Is(err, order.ErrOrderNotFound):
		s.consoleFail(w, r, err)
		return
	case errors.Is(err, order.ErrAlreadyCancelled):
		s.Error(w, r, http.StatusConflict, views.Fill(t.ErrAlreadyCancelled, "id", id))
		return
	default:
		s.Error(w, r, http.StatusServiceUnavailable, consoleText(r).ErrUnavailable)
		return
	}
	s.audit(r.Context(), audit.Entry{Actor: sess.Operator, Room: roomName, Action: "order.cancel", Target: id,
		Old: order.StatusPlaced, New: order.StatusCancelled})
	s.log.Info("console: order cancelled", "operator", sess.Operator, "room", roomName, "order", id,
		slog.Int64("product", o.ProductID), slog.Int64("quantity", o.Quantity))
	back := ordersBack(r.PostForm.Get("back"))
	back.Set("cancelled", id)
	http.Redirect(w, r, "/admin/orders"+pathQuery(back), http.StatusSeeOther)
}

// ordersBack keeps of a cancel form's "back" field the orders page's own
// filters, so that the operator returns to the listing they were on.
func ordersBack(raw string) url.Values {
	out := url.Values{}
	if len(raw) > 4096 {
		return out
	}
	in, err := url.ParseQuery(raw)
	if err != nil {
		return out
	}
	for _, k := range []string{"room", "from", "to", "status", "utm_source", "utm_medium", "utm_campaign", "tz", "after"} {
		if v := in.Get(k); v != "" && len(v) <= order.MaxUTMFilter && plaintext.Valid(v) {
			out.Set(k, v)
		}
	}
	return out
}

// consoleRooms returns the rooms to choose from on the orders,
// attribution and audit pages: those of the order database and those of
// the line (a room may have joins and no product yet), in order.
func (s *Console) consoleRooms(ctx context.Context, co Orders) ([]string, error) {
	names, err := co.OrderRooms(ctx)
	if err != nil {
		return nil, err
	}
	if more, err := s.rooms.Rooms(ctx); err == nil {
		names = append(names, more...)
	} else {
		s.log.Warn("console: rooms of the line", "err", err)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) > order.MaxOrderRooms {
		names = names[:order.MaxOrderRooms]
	}
	return names, nil
}
