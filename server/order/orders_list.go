package order

import (
	"context"
	"fmt"
	"strings"
	"time"

	"waitingroom/server/plaintext"
	"waitingroom/server/room"
)

// The console's view of the orders: a filtered listing, paged by id, that
// never carries a visitor id or a token hash.

// Order statuses.
const (
	StatusPlaced    = "placed"
	StatusCancelled = "cancelled"
)

// MaxListLimit bounds one page of ListOrders; DefaultListLimit is a page
// when the filter names none.
const (
	MaxListLimit     = 500
	DefaultListLimit = 50
)

// MaxUTMFilter bounds each UTM value of a filter, in bytes (the order API
// stores at most 200).
const MaxUTMFilter = 200

// OrderFilter selects orders. Zero fields select everything.
type OrderFilter struct {
	Room string
	// From (inclusive) and To (exclusive) bound created_at.
	From, To time.Time
	// Status is StatusPlaced, StatusCancelled, or "" for both.
	Status string
	// Source, Medium and Campaign match the order's UTM exactly.
	Source, Medium, Campaign string
	// AfterID continues a listing: only orders with a smaller id (the
	// listing is newest first). 0 starts from the newest.
	AfterID int64
	// Limit is the page size: 0 is DefaultListLimit, at most MaxListLimit.
	Limit int
}

// InvalidFilterError names the field of an OrderFilter that is out of
// bounds.
type InvalidFilterError struct{ Field string }

func (e *InvalidFilterError) Error() string { return "order: invalid filter field " + e.Field }

// Validate returns an *InvalidFilterError for a filter out of bounds.
func (f OrderFilter) Validate() error {
	switch {
	case f.Room != "" && !room.ValidName(f.Room):
		return &InvalidFilterError{Field: "room"}
	case !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To):
		return &InvalidFilterError{Field: "to"}
	case f.Status != "" && f.Status != StatusPlaced && f.Status != StatusCancelled:
		return &InvalidFilterError{Field: "status"}
	case !validUTMFilter(f.Source):
		return &InvalidFilterError{Field: "utm_source"}
	case !validUTMFilter(f.Medium):
		return &InvalidFilterError{Field: "utm_medium"}
	case !validUTMFilter(f.Campaign):
		return &InvalidFilterError{Field: "utm_campaign"}
	case f.AfterID < 0:
		return &InvalidFilterError{Field: "after"}
	case f.Limit < 0 || f.Limit > MaxListLimit:
		return &InvalidFilterError{Field: "limit"}
	}
	return nil
}

func validUTMFilter(s string) bool { return len(s) <= MaxUTMFilter && plaintext.Valid(s) }

// OrderRow is one order as the console shows it.
type OrderRow struct {
	ID          int64  `db:"id"`
	PublicID    string `db:"public_id"`
	Room        string `db:"room"`
	ProductID   int64  `db:"product_id"`
	ProductName string `db:"product_name"`
	Quantity    int64  `db:"quantity"`
	// UnitPrice is the price the order was placed at, in the smallest
	// unit of Currency; -1 (and Currency "") for orders placed before
	// prices were kept.
	UnitPrice int64     `db:"unit_price"`
	Currency  string    `db:"currency"`
	Status    string    `db:"status"`
	Source    string    `db:"utm_source"`
	Medium    string    `db:"utm_medium"`
	Campaign  string    `db:"utm_campaign"`
	Term      string    `db:"utm_term"`
	Content   string    `db:"utm_content"`
	Gclid     string    `db:"gclid"`
	Fbclid    string    `db:"fbclid"`
	Ttclid    string    `db:"ttclid"`
	CreatedAt time.Time `db:"created_at"`
}

// Amount is Quantity × UnitPrice, or -1 when the price is unknown.
func (o OrderRow) Amount() int64 {
	if o.UnitPrice < 0 {
		return -1
	}
	return o.Quantity * o.UnitPrice
}

// UTM returns the order's attribution.
func (o OrderRow) UTM() UTM {
	return UTM{Source: o.Source, Medium: o.Medium, Campaign: o.Campaign, Term: o.Term, Content: o.Content,
		Gclid: o.Gclid, Fbclid: o.Fbclid, Ttclid: o.Ttclid}
}

// orderRowColumns are the columns an OrderRow is read from (orders o
// joined with products p).
const orderRowColumns = `o.id, o.public_id, o.room, o.product_id, p.name AS product_name, o.quantity,
	COALESCE(o.unit_price, -1) AS unit_price, COALESCE(o.currency, '') AS currency, o.status,
	COALESCE(o.utm_source, '') AS utm_source, COALESCE(o.utm_medium, '') AS utm_medium,
	COALESCE(o.utm_campaign, '') AS utm_campaign, COALESCE(o.utm_term, '') AS utm_term,
	COALESCE(o.utm_content, '') AS utm_content, COALESCE(o.gclid, '') AS gclid, COALESCE(o.fbclid, '') AS fbclid,
	COALESCE(o.ttclid, '') AS ttclid, o.created_at`

// timeArg is t as the database compares it with created_at: a time for
// PostgreSQL; for SQLite the text CURRENT_TIMESTAMP writes
// ("2006-01-02 15:04:05", UTC), which compares in order as text.
func (s *Store) timeArg(t time.Time) any {
	if s.postgres() {
		return t.UTC()
	}
	return t.UTC().Format(time.DateTime)
}

// listOrders returns one page of the orders f selects, newest first.
func (s *Store) listOrders(ctx context.Context, f OrderFilter) ([]OrderRow, error) {
	var where []string
	var args []any
	add := func(cond string, arg any) {
		where = append(where, cond)
		args = append(args, arg)
	}
	if f.Room != "" {
		add("o.room = ?", f.Room)
	}
	if !f.From.IsZero() {
		// A whole second: SQLite keeps created_at to the second.
		add("o.created_at >= ?", s.timeArg(f.From.Truncate(time.Second)))
	}
	if !f.To.IsZero() {
		add("o.created_at < ?", s.timeArg(f.To.Truncate(time.Second)))
	}
	if f.Status != "" {
		add("o.status = ?", f.Status)
	}
	if f.Source != "" {
		add("o.utm_source = ?", f.Source)
	}
	if f.Medium != "" {
		add("o.utm_medium = ?", f.Medium)
	}
	if f.Campaign != "" {
		add("o.utm_campaign = ?", f.Campaign)
	}
	if f.AfterID > 0 {
		add("o.id < ?", f.AfterID)
	}
	q := `SELECT ` + orderRowColumns + ` FROM orders o JOIN products p ON p.id = o.product_id`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY o.id DESC LIMIT ?`
	args = append(args, f.Limit)
	rows := []OrderRow{}
	if err := s.db.SelectContext(ctx, &rows, s.db.Rebind(q), args...); err != nil {
		return nil, fmt.Errorf("order: list orders: %w", err)
	}
	return rows, nil
}

// ListOrders returns one page of the orders f selects, newest first: pass
// the last row's ID as the next filter's AfterID for the next page. It
// returns an *InvalidFilterError or ErrUnavailable.
func (s *Service) ListOrders(ctx context.Context, f OrderFilter) ([]OrderRow, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if f.Limit == 0 {
		f.Limit = DefaultListLimit
	}
	rows, err := s.store.listOrders(ctx, f)
	if err != nil {
		s.log.Warn("order: list orders", "room", f.Room, "err", err)
		return nil, ErrUnavailable
	}
	return rows, nil
}

// MaxOrderRooms bounds OrderRooms.
const MaxOrderRooms = 500

// orderRooms returns the names of the rooms with products or orders.
func (s *Store) orderRooms(ctx context.Context) ([]string, error) {
	names := []string{}
	err := s.db.SelectContext(ctx, &names, s.db.Rebind(`SELECT room FROM products UNION SELECT room FROM orders
		ORDER BY 1 LIMIT ?`), MaxOrderRooms)
	if err != nil {
		return nil, fmt.Errorf("order: rooms: %w", err)
	}
	return names, nil
}

// OrderRooms returns the names of the rooms that have products or orders,
// in order (at most MaxOrderRooms), for the console's room choice. It
// returns ErrUnavailable when the database does not answer.
func (s *Service) OrderRooms(ctx context.Context) ([]string, error) {
	names, err := s.store.orderRooms(ctx)
	if err != nil {
		s.log.Warn("order: rooms", "err", err)
		return nil, ErrUnavailable
	}
	return names, nil
}
