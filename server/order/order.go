// Package order places orders behind the entry token: a single-use claim in
// Redis, the room's global order bucket, and one transaction in the order
// database. It fails closed: when Redis cannot vouch for a token, nothing
// reaches the database.
package order

import (
	"errors"
	"strconv"
	"time"
)

// Errors of Place. Each maps to one HTTP answer.
var (
	// ErrTokenMissing: no entry token was sent (401).
	ErrTokenMissing = errors.New("entry token missing")
	// ErrTokenInvalid: malformed, unknown, expired or not this visitor's (401).
	ErrTokenInvalid = errors.New("entry token invalid or expired")
	// ErrTokenInUse: another attempt with this token is running (409, in a
	// *WaitError that says for how long).
	ErrTokenInUse = errors.New("entry token in use")
	// ErrTokenPaused: the token had too many failed attempts and rests for
	// a while (429, in a *WaitError that says for how long).
	ErrTokenPaused = errors.New("entry token paused after too many failed attempts")
	// ErrTokenUsed: the token already placed an order (409).
	ErrTokenUsed = errors.New("entry token already used")
	// ErrSoldOut: nothing left of the product; the token stays usable (409).
	ErrSoldOut = errors.New("sold out")
	// ErrInsufficientStock: some is left, but less than the quantity asked
	// for (409, in a *StockError that says how many); the token stays
	// usable.
	ErrInsufficientStock = errors.New("not enough stock for this quantity")
	// ErrProductRequired: the room has several products and none was named (400).
	ErrProductRequired = errors.New("productId is required: the room has several products")
	// ErrProductNotFound: no such product in the room (400).
	ErrProductNotFound = errors.New("no such product in this room")
	// ErrOverLimit: the order would take the buyer's total in the room
	// past its maxPerBuyer (400, in a *LimitError that says how many are
	// left); the token stays usable.
	ErrOverLimit = errors.New("over the room's limit per buyer")
	// ErrBadQuantity: quantity out of 1..MaxQuantity (400).
	ErrBadQuantity = errors.New("quantity out of range")
	// ErrUnavailable: Redis or the database failed; the token stays usable (503).
	ErrUnavailable = errors.New("order path unavailable")
)

// RateLimitedError reports an empty order bucket (429); the token stays
// usable and the buyer may retry after RetryAfter.
type RateLimitedError struct{ RetryAfter time.Duration }

func (e *RateLimitedError) Error() string { return "order rate limit reached" }

// StockError wraps ErrInsufficientStock with the stock left, at least 1.
type StockError struct{ Left int64 }

func (e *StockError) Error() string { return "only " + strconv.FormatInt(e.Left, 10) + " left" }

// Unwrap returns ErrInsufficientStock.
func (e *StockError) Unwrap() error { return ErrInsufficientStock }

// LimitError wraps ErrOverLimit with the room's limit per buyer and how
// many the buyer may still order (Left, 0 once they reached it).
type LimitError struct{ Limit, Left int }

func (e *LimitError) Error() string {
	return "over the limit of " + strconv.Itoa(e.Limit) + " per buyer: " + strconv.Itoa(e.Left) + " left"
}

// Unwrap returns ErrOverLimit.
func (e *LimitError) Unwrap() error { return ErrOverLimit }

// WaitError wraps ErrTokenInUse or ErrTokenPaused with the time after which
// a retry with the same token can succeed.
type WaitError struct {
	Err        error
	RetryAfter time.Duration
}

func (e *WaitError) Error() string { return e.Err.Error() }

// Unwrap returns ErrTokenInUse or ErrTokenPaused.
func (e *WaitError) Unwrap() error { return e.Err }

// MaxQuantity bounds one order.
const MaxQuantity = 10

// Product is one thing a room sells. Price is in the smallest unit of
// Currency, an ISO 4217 code.
type Product struct {
	ID       int64  `json:"id" db:"id"`
	Name     string `json:"name" db:"name"`
	Price    int64  `json:"price" db:"price"`
	Currency string `json:"currency" db:"currency"`
	Stock    int64  `json:"stock" db:"stock"`
	// ImageURL is the product's picture on the order form: an absolute
	// https URL, a path on this site starting with /, or empty for none.
	ImageURL string `json:"imageURL" db:"image_url"`
}

// UTM is the marketing attribution carried from the room's link: its
// five UTM values and the ad click ids (Google's gclid, Meta's fbclid,
// TikTok's ttclid).
type UTM struct {
	Source, Medium, Campaign, Term, Content string
	Gclid, Fbclid, Ttclid                   string
}

// Request is one order attempt.
type Request struct {
	Room    string
	Visitor string
	Token   string
	// ProductID may be 0 when the room has exactly one product.
	ProductID int64
	Quantity  int
	// MaxPerBuyer, when positive, caps the total quantity of the
	// visitor's placed orders in the room, this one included (the room's
	// maxPerBuyer).
	MaxPerBuyer    int
	IdempotencyKey string
	UTM            UTM
}

// Order is a placed order.
type Order struct {
	// ID is the database's sequential id; it is never shown.
	ID int64 `json:"-" db:"id"`
	// PublicID is the order number buyers see (the JSON orderId and the
	// confirmation URL): 16 random bytes in URL-safe base64, so that order
	// numbers are neither sequential nor guessable.
	PublicID  string `json:"orderId" db:"public_id"`
	Room      string `json:"-" db:"room"`
	ProductID int64  `json:"productId" db:"product_id"`
	Visitor   string `json:"-" db:"visitor"`
	Quantity  int    `json:"quantity" db:"quantity"`
	// UnitPrice and Currency are the product's price when the order was
	// placed; UnitPrice is -1 for orders placed before it was kept.
	UnitPrice int64     `json:"-" db:"unit_price"`
	Currency  string    `json:"-" db:"currency"`
	CreatedAt time.Time `json:"-" db:"created_at"`
}
