package response

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"waitingroom/server/challenge"
	"waitingroom/server/order"
	"waitingroom/server/pass"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/share"
	"waitingroom/views"
)

// Scope is where an error is answered, for an error that answers
// differently there: an order (the product the buyer named), the admin
// API's catalogue (the product of the address), anything else.
type Scope int

const (
	// ScopeAny is every request without a scope of its own.
	ScopeAny Scope = iota
	// ScopeOrder is placing an order: the API's and the order form's.
	ScopeOrder
	// ScopeCatalog is the admin API's products of a room.
	ScopeCatalog
)

// Retry says whether an error page offers to try again.
type Retry int

const (
	// RetryNone offers no retry.
	RetryNone Retry = iota
	// RetryRequest offers the request again: a GET is asked again, a form
	// is posted again when the caller has one (PageOptions.Repost); a form
	// without one goes back to the room's page.
	RetryRequest
	// RetryAlways offers a retry whatever the method.
	RetryAlways
)

// Rule is one row of the table: which errors it takes and how each
// surface answers them.
type Rule struct {
	// Name names the row in tests.
	Name string
	// Match reports whether err is this row's; nil is the fallback of its
	// scope (an error no row takes).
	Match func(err error) bool
	// Scope limits the row to requests of one scope; ScopeAny rows take
	// every request's errors.
	Scope Scope
	// Example is an error the row takes, for tests.
	Example error

	// Status and Code answer the API; Message is the API's message, in
	// which "{room}" stands for the address's room name, quoted.
	Status  int
	Code    string
	Message string
	// Body, when set, is the JSON body in place of Error: e, with the
	// figures err carries.
	Body func(e Error, err error, d Detail) any
	// NoStore keeps the API's answer out of caches.
	NoStore bool
	// Wait, when set, is the Retry-After err carries.
	Wait func(err error) (time.Duration, bool)
	// WaitAPIOnly leaves Retry-After off the pages.
	WaitAPIOnly bool

	// PageStatus answers the buyer's HTML page when it is not Status.
	PageStatus int
	// Heading is the page's heading; nil is the scope's heading, or the
	// status in words.
	Heading func(t views.Messages) string
	// Text is the page's message, in t's language; nil has no page: the
	// scope's fallback answers.
	Text func(t views.Messages, err error) string
	// NoRoom leaves the room out of the page (a room that does not exist).
	NoRoom bool
	// Rejoin offers to join the room's line again.
	Rejoin bool
	// Retry says whether the page offers a retry.
	Retry Retry

	// Console is the console page's message in the operator's language
	// lang; nil has no console answer: the fallback answers.
	Console func(lang string) string
}

// status is the rule's status on surface html (the buyer's page) or not.
func (r Rule) status(html bool) int {
	if html && r.PageStatus != 0 {
		return r.PageStatus
	}
	return r.Status
}

func is(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

func as[E error](err error) (E, bool) {
	var e E
	ok := errors.As(err, &e)
	return e, ok
}

func asIs[E error](err error) bool {
	_, ok := as[E](err)
	return ok
}

// orderWait is the Retry-After of an order refused for a while.
func orderWait(err error) (time.Duration, bool) {
	if e, ok := as[*order.RateLimitedError](err); ok {
		return e.RetryAfter, true
	}
	if e, ok := as[*order.WaitError](err); ok {
		return e.RetryAfter, true
	}
	return 0, false
}

// waitText fills "{s}" of msg with err's Retry-After in seconds.
func waitText(msg string, err error) string {
	d, _ := orderWait(err)
	return views.Fill(msg, "s", strconv.Itoa(RetrySeconds(d)))
}

// LimitText says, in t's language, how many of the room's limit per
// buyer the buyer may still order.
func LimitText(t views.Messages, e *order.LimitError) string {
	if e.Left <= 0 {
		return views.Fill(t.ErrLimitReached, "n", strconv.Itoa(e.Limit))
	}
	return views.Fill(views.Fill(t.ErrOverLimit, "n", strconv.Itoa(e.Limit)), "left", strconv.Itoa(e.Left))
}

// Detail is what a JSON body may say beside the error: the visitor's
// messages and the address's room.
type Detail struct {
	T    views.Messages
	Room string
}

// ChallengeURL is where a client gets a proof-of-work challenge of room.
func ChallengeURL(room string) string { return "/api/rooms/" + room + "/challenge" }

// ChallengeRefusal is a 428's body: the error, and where to get a
// challenge.
type ChallengeRefusal struct {
	Error
	Challenge string `json:"challenge"`
}

func challengeBody(e Error, _ error, d Detail) any {
	return ChallengeRefusal{Error: e, Challenge: ChallengeURL(d.Room)}
}

// StockError is 409 insufficient_stock: the Error and the stock left.
type StockError struct {
	Error
	Left int64 `json:"left"`
}

// LimitError is 400 over_limit: the Error, the room's limit per buyer and
// how many the buyer may still order.
type LimitError struct {
	Error
	Limit int `json:"limit"`
	Left  int `json:"left"`
}

func fewLeft(t views.Messages, err error) string {
	e, _ := as[*order.StockError](err)
	var left int64
	if e != nil {
		left = e.Left
	}
	return views.Fill(t.ErrFewLeft, "n", strconv.FormatInt(left, 10))
}

func overLimit(t views.Messages, err error) string {
	e, ok := as[*order.LimitError](err)
	if !ok {
		return LimitText(t, &order.LimitError{})
	}
	return LimitText(t, e)
}

func text(f func(views.Messages) string) func(views.Messages, error) string {
	return func(t views.Messages, _ error) string { return f(t) }
}

func notPlaced(t views.Messages) string { return t.TitleNotPlaced }
func expired(t views.Messages) string   { return t.Expired }
func refused(t views.Messages) string   { return t.TitleRefused }

func joinCheck(t views.Messages, _ error) string { return t.JoinCheck }

// Rules is the table, first match first: every typed error of the server
// that an answer tells apart, with its answer on each surface.
func Rules() []Rule {
	pausedOrder := func(err error) bool { return asIs[*order.WaitError](err) && errors.Is(err, order.ErrTokenPaused) }
	waitQueue := func(err error) bool { return asIs[*queue.WaitError](err) || errors.Is(err, queue.ErrTokenInUse) }
	return append(accessRules(), []Rule{
		{Name: "room not found", Match: is(room.ErrNotFound), Example: room.ErrNotFound,
			Status: http.StatusNotFound, Code: "room_not_found", Message: "There is no room named {room}.",
			Heading: func(t views.Messages) string { return t.TitleNotFound }, Text: text(func(t views.Messages) string { return t.NoSuchRoom }), NoRoom: true,
			Console: func(lang string) string { return views.RoomsTextFor(lang).ErrNoRoom }},

		// Gate mode.
		{Name: "gate off", Match: is(pass.ErrOff), Example: pass.ErrOff,
			Status: http.StatusNotFound, Code: "gate_off", Message: "Gate mode is off on this server.",
			Heading: func(t views.Messages) string { return t.TitleNotFound }, Text: text(func(t views.Messages) string { return views.GateTextFor(t.Lang).Off })},
		{Name: "room without a shop", Match: is(room.ErrNoShop), Example: room.ErrNoShop,
			Status: http.StatusNotFound, Code: "gate_off", Message: "This room sends buyers to no outside shop (its targetURL is empty).",
			Heading: func(t views.Messages) string { return t.TitleNotFound }, Text: text(func(t views.Messages) string { return views.GateTextFor(t.Lang).Off })},

		// Orders.
		{Name: "orders at the shop", Match: is(order.ErrAtShop), Example: order.ErrAtShop,
			Status: http.StatusConflict, Code: "gate_on",
			Message: "This room's orders are taken at its shop: a buyer whose turn it is continues there with a pass (POST /r/{room}/pass).",
			Heading: notPlaced, Text: text(func(t views.Messages) string { return views.GateTextFor(t.Lang).OrdersAtShop })},
		{Name: "over limit", Match: asIs[*order.LimitError], Example: &order.LimitError{Limit: 2, Left: 1},
			Status: http.StatusBadRequest, Code: "over_limit",
			Body: func(e Error, err error, d Detail) any {
				l, _ := as[*order.LimitError](err)
				return LimitError{Error: Error{Code: e.Code, Message: LimitText(d.T, l)}, Limit: l.Limit, Left: l.Left}
			},
			Heading: notPlaced, Text: overLimit},
		{Name: "order rate limited", Match: asIs[*order.RateLimitedError], Example: &order.RateLimitedError{RetryAfter: time.Second},
			Status: http.StatusTooManyRequests, Code: "rate_limited", Message: "Many orders are arriving; retry shortly. The entry token stays valid.", Wait: orderWait,
			Heading: notPlaced, Text: func(t views.Messages, err error) string { return waitText(t.ErrRateLimited, err) }, Retry: RetryRequest},
		{Name: "order token paused", Match: pausedOrder, Example: &order.WaitError{Err: order.ErrTokenPaused, RetryAfter: time.Second},
			Status: http.StatusTooManyRequests, Code: "token_paused", Wait: orderWait,
			Message: "Too many order attempts with this entry token failed; retry after the pause. The entry token stays valid.",
			Heading: notPlaced, Text: func(t views.Messages, err error) string { return waitText(t.ErrTokenPaused, err) }, Retry: RetryRequest},
		{Name: "order token waits", Match: asIs[*order.WaitError], Example: &order.WaitError{Err: order.ErrTokenInUse, RetryAfter: time.Second},
			Status: http.StatusConflict, Code: "token_in_use", Message: "An order with this entry token is being processed.", Wait: orderWait,
			Heading: notPlaced, Text: text(func(t views.Messages) string { return t.ErrTokenInUse }), Retry: RetryRequest},
		{Name: "order token missing", Match: is(order.ErrTokenMissing), Example: order.ErrTokenMissing,
			Status: http.StatusUnauthorized, Code: "token_missing", Message: "An X-Entry-Token header is required.",
			Heading: expired, Text: text(func(t views.Messages) string { return t.ErrTokenGone }), Rejoin: true},
		{Name: "order token invalid", Match: is(order.ErrTokenInvalid), Example: order.ErrTokenInvalid,
			Status: http.StatusUnauthorized, Code: "token_invalid", Message: "The entry token is invalid, expired or not this visitor's.",
			Heading: expired, Text: text(func(t views.Messages) string { return t.ErrTokenGone }), Rejoin: true},
		{Name: "order token in use", Match: is(order.ErrTokenInUse), Example: order.ErrTokenInUse,
			Status: http.StatusConflict, Code: "token_in_use", Message: "An order with this entry token is being processed.",
			Heading: notPlaced, Text: text(func(t views.Messages) string { return t.ErrTokenInUse }), Retry: RetryRequest},
		{Name: "order token used", Match: is(order.ErrTokenUsed), Example: order.ErrTokenUsed,
			Status: http.StatusConflict, Code: "token_used", Message: "This entry token has already placed an order.",
			Heading: notPlaced, Text: text(func(t views.Messages) string { return t.ErrTokenUsed })},
		{Name: "insufficient stock", Match: asIs[*order.StockError], Example: &order.StockError{Left: 1},
			Status: http.StatusConflict, Code: "insufficient_stock",
			Body: func(e Error, err error, d Detail) any {
				s, _ := as[*order.StockError](err)
				return StockError{Error: Error{Code: e.Code, Message: fewLeft(d.T, err)}, Left: s.Left}
			},
			Heading: notPlaced, Text: fewLeft},
		{Name: "sold out", Match: is(order.ErrSoldOut), Example: order.ErrSoldOut,
			Status: http.StatusConflict, Code: "sold_out", Message: "Sold out. The entry token stays valid.",
			Heading: func(t views.Messages) string { return t.SoldOutTitle }, Text: text(func(t views.Messages) string { return t.ErrSoldOut })},
		{Name: "product required", Match: is(order.ErrProductRequired), Example: order.ErrProductRequired,
			Status: http.StatusBadRequest, Code: "product_required", Message: "This room sells several products: name one with productId.",
			Heading: notPlaced, Text: text(func(t views.Messages) string { return t.ErrBadOrder })},
		{Name: "order product not found", Match: is(order.ErrProductNotFound), Scope: ScopeOrder, Example: order.ErrProductNotFound,
			Status: http.StatusBadRequest, Code: "product_not_found", Message: "There is no such product in this room.",
			Heading: notPlaced, Text: text(func(t views.Messages) string { return t.ErrBadOrder })},
		{Name: "bad quantity", Match: is(order.ErrBadQuantity), Example: order.ErrBadQuantity,
			Status: http.StatusBadRequest, Code: "bad_quantity", Message: "quantity must be between 1 and " + strconv.Itoa(order.MaxQuantity) + ".",
			Heading: notPlaced, Text: text(func(t views.Messages) string { return t.ErrBadOrder })},

		// Products.
		{Name: "invalid product", Match: asIs[*order.InvalidProductError], Example: &order.InvalidProductError{},
			Status: http.StatusBadRequest, Code: "invalid_product",
			Body: func(e Error, err error, _ Detail) any {
				p, _ := as[*order.InvalidProductError](err)
				return Error{Code: e.Code, Message: p.Error()}
			}},
		{Name: "product not found", Match: is(order.ErrProductNotFound), Example: order.ErrProductNotFound,
			Status: http.StatusNotFound, Code: "product_not_found", Message: "There is no such product in this room.",
			Console: func(lang string) string { return views.RoomsTextFor(lang).ErrNoProduct }},
		{Name: "product has orders", Match: is(order.ErrProductHasOrders), Example: order.ErrProductHasOrders,
			Status: http.StatusConflict, Code: "product_has_orders", Message: "The product has orders, which are records: set its stock to 0 to stop selling it."},

		// The line and gate mode.
		{Name: "not open", Match: is(queue.ErrNotOpen), Example: queue.ErrNotOpen,
			Status: http.StatusConflict, Code: "not_open", Message: "This sale is not open yet.",
			Heading: func(t views.Messages) string { return t.NotOpen }, Text: text(func(t views.Messages) string { return t.NotOpenHint })},
		{Name: "sale ended", Match: is(queue.ErrSaleEnded), Example: queue.ErrSaleEnded,
			Status: http.StatusConflict, Code: "sale_ended", Message: "This sale has ended.",
			Heading: func(t views.Messages) string { return t.Ended }, Text: text(func(t views.Messages) string { return t.EndedHint })},
		{Name: "entry token invalid", Match: is(queue.ErrTokenInvalid), Example: queue.ErrTokenInvalid,
			Status: http.StatusUnauthorized, Code: "token_invalid", Message: "The entry token is invalid, expired or not this visitor's.",
			Heading: expired, Text: text(func(t views.Messages) string { return t.ErrTokenGone }), Rejoin: true},
		{Name: "entry token used", Match: is(queue.ErrTokenUsed), Example: queue.ErrTokenUsed,
			Status: http.StatusConflict, Code: "pass_used", Message: "This pass has already been used.",
			Heading: refused, Text: text(func(t views.Messages) string { return views.GateTextFor(t.Lang).PassUsed })},
		{Name: "entry token busy", Match: waitQueue, Example: queue.ErrTokenInUse,
			Status: http.StatusServiceUnavailable, Code: "pass_busy", Message: "Another attempt is redeeming this pass right now; try again in a second.",
			Wait: func(error) (time.Duration, bool) { return time.Second, true }, WaitAPIOnly: true,
			PageStatus: http.StatusConflict, Heading: refused, Text: text(func(t views.Messages) string { return t.ErrTokenInUse })},
		{Name: "pass invalid", Match: func(err error) bool { return errors.Is(err, pass.ErrInvalid) || errors.Is(err, queue.ErrPassUnknown) },
			Example: queue.ErrPassUnknown,
			Status:  http.StatusUnauthorized, Code: "pass_invalid", Message: "The pass is not valid: a bad signature, expired, for another room or shop, or unknown."},
		{Name: "session gone", Match: is(queue.ErrSessionGone), Example: queue.ErrSessionGone,
			Status: http.StatusNotFound, Code: "session_gone", Message: "There is no such live session."},

		{Name: "proof of work required", Match: is(queue.ErrChallengeRequired), Example: queue.ErrChallengeRequired,
			Status: http.StatusPreconditionRequired, Code: "challenge_required", Message: "Joining this room takes a proof of work: get a challenge, solve it and send the solution in the X-Altcha header.",
			Body: challengeBody, NoStore: true, Text: joinCheck, Retry: RetryAlways},
		{Name: "proof of work used", Match: is(queue.ErrChallengeUsed), Example: queue.ErrChallengeUsed,
			Status: http.StatusPreconditionRequired, Code: "challenge_used", Message: "This proof of work was used already. Get a new challenge.",
			Body: challengeBody, NoStore: true, Text: joinCheck, Retry: RetryAlways},
		{Name: "proof of work expired", Match: is(challenge.ErrExpired), Example: challenge.ErrExpired,
			Status: http.StatusPreconditionRequired, Code: "challenge_expired", Message: "This proof of work has expired. Get a new challenge.",
			Body: challengeBody, NoStore: true, Text: joinCheck, Retry: RetryAlways},
		{Name: "proof of work stale", Match: is(queue.ErrChallengeStale), Example: queue.ErrChallengeStale,
			Status: http.StatusPreconditionRequired, Code: "challenge_expired", Message: "This proof of work was issued before the room's pre-queue or opening. Get a new challenge.",
			Body: challengeBody, NoStore: true, Text: joinCheck, Retry: RetryAlways},
		{Name: "proof of work for another room", Match: is(challenge.ErrOtherRoom), Example: challenge.ErrOtherRoom,
			Status: http.StatusPreconditionRequired, Code: "challenge_invalid", Message: "This proof of work is for another room. Get a challenge of this room.",
			Body: challengeBody, NoStore: true, Text: joinCheck, Retry: RetryAlways},
		{Name: "proof of work invalid", Match: func(err error) bool {
			return errors.Is(err, challenge.ErrInvalid) || errors.Is(err, challenge.ErrOtherNetwork)
		}, Example: challenge.ErrInvalid,
			Status: http.StatusPreconditionRequired, Code: "challenge_invalid", Message: "This proof of work is not valid. Get a new challenge.",
			Body: challengeBody, NoStore: true, Text: joinCheck, Retry: RetryAlways},
		// A proof solved too early refuses the page's join; the API has
		// no answer of its own for it.
		{Name: "proof of work early", Match: is(challenge.ErrEarly), Example: challenge.ErrEarly,
			Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "The waiting room is briefly unavailable. Please retry in a moment.",
			PageStatus: http.StatusPreconditionRequired, Text: joinCheck, Retry: RetryAlways},

		// Share links.
		{Name: "share link not found", Match: is(share.ErrNotFound), Example: share.ErrNotFound,
			Status: http.StatusNotFound, Code: "not_found", Message: "There is no such link.",
			Heading: func(t views.Messages) string { return t.TitleNotFound }, Text: text(func(t views.Messages) string { return t.ShareLinkGone }), NoRoom: true,
			Console: func(lang string) string { return views.ShareTextFor(lang).ErrNoLink }},
		{Name: "order not found", Match: is(order.ErrOrderNotFound), Example: order.ErrOrderNotFound,
			Status: http.StatusNotFound, Code: "order_not_found", Message: "There is no such order in this room.",
			Console: func(lang string) string { return views.OrdersTextFor(lang).ErrOrderNotFound }},

		// Unknown errors: the dependency is unavailable; the client never
		// sees the error's text.
		{Name: "order unavailable", Scope: ScopeOrder, Example: context.DeadlineExceeded,
			Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "Orders are briefly unavailable. The entry token stays valid; retry in a moment.",
			Heading: notPlaced, Text: text(func(t views.Messages) string { return t.ErrUnavailable }), Retry: RetryRequest},
		{Name: "catalog unavailable", Scope: ScopeCatalog, Example: context.DeadlineExceeded,
			Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "The product database is briefly unavailable. Please retry in a moment."},
		{Name: "unavailable", Example: context.DeadlineExceeded,
			Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "The waiting room is briefly unavailable. Please retry in a moment.",
			Text: text(func(t views.Messages) string { return t.TroublePage }), Retry: RetryRequest,
			Console: func(lang string) string { return views.RoomsTextFor(lang).ErrUnavailable }},
	}...)
}

// lookup finds err's row for scope, and whether a row takes it (false:
// the fallback answers).
func lookup(rules []Rule, scope Scope, err error) (Rule, bool) {
	for _, r := range rules {
		if r.Match != nil && (r.Scope == ScopeAny || r.Scope == scope) && r.Match(err) {
			return r, true
		}
	}
	return fallback(rules, scope), false
}

// fallback is scope's row for an error no row takes.
func fallback(rules []Rule, scope Scope) Rule {
	var general Rule
	for _, r := range rules {
		if r.Match != nil {
			continue
		}
		if r.Scope == scope {
			return r
		}
		if r.Scope == ScopeAny {
			general = r
		}
	}
	return general
}
