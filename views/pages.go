package views

import (
	"maps"
	"net/url"
	"slices"
	"strconv"

	"github.com/a-h/templ"
)

// Assets are the fingerprinted URLs of the page's stylesheet and script.
type Assets struct {
	CSS string
	JS  string
	// preview: Icon is the page's favicon (the room's uploaded one; ""
	// is DefaultIcon); Preview, set on the room page only, is its link
	// preview.
	Icon    string
	Preview *LinkPreview
	// pow: Solver is the URL of the proof-of-work worker that the room
	// page's script starts (the vendored ALTCHA worker).
	Solver string
}

// Product is one product as the order form shows it.
type Product struct {
	ID    int64
	Name  string
	Price int64
	// Currency is the price's ISO 4217 code.
	Currency string
	// Max is the largest quantity one order may take: the smallest of
	// the stock, the room's maxPerBuyer and order.MaxQuantity. 0 is sold
	// out.
	Max int
	// ImageURL, when set, is the product's picture (validated by the
	// catalog: https or a path on this site).
	ImageURL string
}

// RoomPage is the data of the shared, cacheable waiting-room page. It holds
// nothing about the visitor, so its bytes are the same for everyone.
type RoomPage struct {
	Room     string
	Title    string
	T        Messages
	Assets   Assets
	Products []Product
	// ShopURL, when set, is linked from the states that end the wait.
	ShopURL string
	// MaxPerBuyer, when positive, is said next to the quantity.
	MaxPerBuyer int
	Brand       Brand
	// Handoff, when set, is the name of the outside shop that READY sends
	// the buyer on to (gate mode), instead of the order form.
	Handoff string
	// Access is what the join form asks of a buyer.
	Access JoinAccess
}

// JoinAccess is what a room's join form asks of a buyer whose access is
// limited: an access code, and the shop's sign-in page (SignIn) in a
// room that requires the shop's identity.
type JoinAccess struct {
	Code   bool
	SignIn string
	// Lines: the code, or the sign-in, chooses a line of the room's, and
	// a line open to all takes the buyer without it.
	Lines bool
}

// StatusPage is the per-visitor page for browsers without JavaScript.
type StatusPage struct {
	Room   string
	Title  string
	T      Messages
	Assets Assets
	// Status is WAITING, READY, PREQUEUED or NOT_ENTERED.
	Status  string
	Rank    int64
	Ticket  int64
	Waiting int64
	// ETA is the estimated wait in seconds; nil when there is no honest
	// estimate (paused, pre-queue, not open, no measured rate).
	ETA     *int64
	Refresh int
	Token   string
	SoldOut bool
	// Paused: admissions are on hold.
	Paused bool
	// Phase is "scheduled", "prequeue", "open" or "closed" ("" is open).
	Phase string
	// OpensIn and PassLeft are seconds until the opening and until the
	// pass expires; nil when unknown.
	OpensIn  *int64
	PassLeft *int64
	// PassEndsAt is when the pass ends, in unix ms (0: no pass).
	PassEndsAt int64
	// RankUpReason says why the rank went up ("" when it did not).
	RankUpReason string
	// PassOver reports a visitor whose pass ran out: the ready page's
	// refresh at the pass's end came back to a visitor with none.
	PassOver bool
	// UTM are the utm_* fields of the status page's address, carried to
	// the order form.
	UTM     []Field
	ShopURL string
	// MaxPerBuyer, when positive, is said next to the quantity.
	MaxPerBuyer int
	// Products fill the order form.
	Products []Product
	Brand    Brand
	// Handoff, when set, is the name of the outside shop that READY sends
	// the buyer on to (gate mode), instead of the order form.
	Handoff string
	// Access is what the join form asks of a buyer.
	Access JoinAccess
}

// Field is one hidden form field.
type Field struct{ Name, Value string }

// Repost is a form to post again from an error page: its action and its
// hidden fields, so that a retry that can succeed is one click.
type Repost struct {
	Action string
	Fields []Field
}

// Retry is an order form to post again from an error page: the entry token
// and the choices.
type Retry struct {
	Token     string
	ProductID int64
	Quantity  int
	UTM       map[string]string
}

// Repost is o as the form that posts it again to room's order form; nil
// for none.
func (o *Retry) Repost(room string) *Repost {
	if o == nil {
		return nil
	}
	fs := []Field{{"entry_token", o.Token}}
	if o.ProductID > 0 {
		fs = append(fs, Field{"product_id", strconv.FormatInt(o.ProductID, 10)})
	}
	fs = append(fs, Field{"quantity", strconv.Itoa(o.Quantity)})
	for _, k := range slices.Sorted(maps.Keys(o.UTM)) {
		fs = append(fs, Field{k, o.UTM[k]})
	}
	return &Repost{Action: "/r/" + room + "/order", Fields: fs}
}

// ConfirmPage confirms a placed order.
type ConfirmPage struct {
	Room     string
	Title    string
	T        Messages
	Assets   Assets
	OrderID  string
	Product  string
	Price    int64
	Currency string
	Quantity int
	ShopURL  string
	Brand    Brand
}

// ErrorPage is an HTML error answer. Its heading says what happened in
// words; the HTTP status is never shown.
type ErrorPage struct {
	Status  int
	Heading string
	Message string
	Room    string // when set, a link back to the room
	Retry   bool   // whether retrying can succeed (a GET of the page: only for a GET)
	// Rejoin offers to join the room's line again (an expired pass).
	Rejoin bool
	// RoomURL, when set, is the room's absolute address, for a page
	// served on another host (the shop's, gate mode); else the room is
	// linked by its path.
	RoomURL string
	// RetryPost, when set, is a form to post again (an order, a pass).
	RetryPost *Repost
	// ShopURL, when set, is linked back to.
	ShopURL string
	// SignInURL, when set, is the shop's sign-in page, linked to: the
	// page refuses a join for its sign-in, or for having none.
	SignInURL string
	T         Messages
	Assets    Assets
	Brand     Brand
}

// roomHref is the link back to the error page's room.
func (p ErrorPage) roomHref() templ.SafeURL {
	if p.RoomURL != "" {
		return templ.SafeURL(p.RoomURL)
	}
	return templ.SafeURL("/r/" + p.Room)
}

// firstInStock is the index of the first product with stock left, or 0.
func firstInStock(ps []Product) int {
	for i, p := range ps {
		if p.Max > 0 {
			return i
		}
	}
	return 0
}

// formMax is the quantity input's max: the checked product's Max, and at
// least 1 so that the input stays valid (the server refuses an order over
// the stock anyway). ps is not empty.
func formMax(ps []Product) int { return max(ps[firstInStock(ps)].Max, 1) }

// state is the one state the status page shows, in the order that
// decides: a pass first, then the schedule, the stock and the line.
func (p StatusPage) state() string {
	switch {
	case p.Status == "READY":
		return "ready"
	case p.Status == "PREQUEUED":
		return "prequeued"
	case p.SoldOut:
		return "soldout"
	case p.Status == "WAITING" && p.Paused:
		return "paused"
	case p.Status == "WAITING":
		return "waiting"
	case p.Phase == "scheduled":
		return "scheduled"
	case p.Phase == "closed":
		return "ended"
	case p.PassOver:
		return "expired"
	}
	return "none"
}

// placeText says the visitor's place in line; at the front of a paused
// line, without a turn to come.
func (p StatusPage) placeText() string {
	switch {
	case p.Rank == 0 && p.Paused:
		return p.T.NoneAhead
	case p.Rank == 0:
		return p.T.Next
	case p.Rank == 1:
		return p.T.AheadOne
	}
	return Fill(p.T.Ahead, "n", strconv.FormatInt(p.Rank, 10))
}

// PassOverParam is the status page's query parameter that its ready
// state's refresh adds: the pass's end, in unix ms.
const PassOverParam = "pass_over"

// expiryRefresh is the ready page's meta refresh: a second after the pass
// ends, to the status page that then says so.
func (p StatusPage) expiryRefresh() string {
	q := url.Values{}
	for _, f := range p.UTM {
		q.Set(f.Name, f.Value)
	}
	q.Set(PassOverParam, strconv.FormatInt(p.PassEndsAt, 10))
	return strconv.FormatInt(*p.PassLeft+1, 10) + "; url=/r/" + p.Room + "/status?" + q.Encode()
}

// refreshes reports whether the page reloads itself: while the buyer
// waits for something that will come (a buyer in line in a sold-out room
// waits for a restock).
func (p StatusPage) refreshes() bool {
	switch p.state() {
	case "waiting", "paused", "prequeued", "scheduled":
		return p.Refresh > 0
	case "soldout":
		return p.Refresh > 0 && p.Status == "WAITING"
	}
	return false
}

// joinAction is where the status page's join form posts: the join route,
// with the page's utm_* fields in its query string.
func (p StatusPage) joinAction() string { return joinPath(p.Room, p.UTM) }

// joinPath is room's join route with the fields utm in its query string.
func joinPath(room string, utm []Field) string {
	q := url.Values{}
	for _, f := range utm {
		q.Set(f.Name, f.Value)
	}
	if len(q) == 0 {
		return "/r/" + room + "/join"
	}
	return "/r/" + room + "/join?" + q.Encode()
}

// heading is the error page's title: Heading, or the words for its status.
func (p ErrorPage) heading() string {
	if p.Heading != "" {
		return p.Heading
	}
	switch p.Status {
	case 404:
		return p.T.TitleNoSuchPage
	case 403:
		return p.T.TitleRefused
	case 429:
		return p.T.TitleTooMany
	case 500, 502, 503, 504:
		return p.T.TitleTrouble
	}
	return p.T.ErrorTitle
}
