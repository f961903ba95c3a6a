package order

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
)

// Store is the order database's SQL, the same for PostgreSQL and the
// embedded SQLite (queries are written with ? and rebound).
type Store struct {
	db   *sqlx.DB
	work time.Duration
}

// NewStore returns a Store over db. work is extra time each order
// transaction holds its connection, to simulate a heavier downstream in
// calibration runs (ORDER_WORK); it is 0 in production.
func NewStore(db *sqlx.DB, work time.Duration) *Store { return &Store{db: db, work: work} }

// errNoStock and errDuplicate are the store's own outcomes, mapped by the
// service.
var (
	errNoStock   = errors.New("not enough stock")
	errDuplicate = errors.New("token already ordered")
	errIdemTaken = errors.New("idempotency key already used")
)

// Products returns room's products, cheapest first.
func (s *Store) Products(ctx context.Context, room string) ([]Product, error) {
	var ps []Product
	err := s.db.SelectContext(ctx, &ps, s.db.Rebind(`SELECT `+productColumns+` FROM products WHERE room = ? ORDER BY price, id`), room)
	if err != nil {
		return nil, fmt.Errorf("order: list products of %s: %w", room, err)
	}
	return ps, nil
}

// TokenHash is what the orders table keeps of an entry token.
func TokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// place runs the order's one transaction: check the buyer's limit (when
// the room has one), take the stock under stock >= quantity, then insert
// the order. It returns a *LimitError (over the room's maxPerBuyer),
// errNoStock (none left), a *StockError (less left than asked for),
// errDuplicate (the token already ordered), errIdemTaken, or a database
// error; on any error nothing is written.
func (s *Store) place(ctx context.Context, r Request, productID int64) (Order, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return Order{}, fmt.Errorf("order: begin: %w", err)
	}
	defer tx.Rollback()
	// The simulated downstream work holds the connection, not the hot
	// product row: the stock update below keeps its row lock for
	// microseconds.
	if s.work > 0 {
		if s.db.DriverName() == "postgres" {
			_, err = tx.ExecContext(ctx, `SELECT pg_sleep($1)`, s.work.Seconds())
		} else {
			time.Sleep(s.work)
		}
		if err != nil {
			return Order{}, fmt.Errorf("order: simulated work: %w", err)
		}
	}
	if err := checkLimit(ctx, tx, r); err != nil {
		// A token that already ordered is "used", not over the limit its
		// own order filled.
		if errors.Is(err, ErrOverLimit) {
			if used, uerr := tokenOrdered(ctx, tx, r.Token); uerr == nil && used {
				return Order{}, errDuplicate
			}
		}
		return Order{}, err
	}
	// The stock is taken at the price it has now, which the order keeps.
	o := Order{Room: r.Room, ProductID: productID, Visitor: r.Visitor, Quantity: r.Quantity, PublicID: NewPublicID()}
	err = tx.QueryRowxContext(ctx, tx.Rebind(`UPDATE products SET stock = stock - ? WHERE id = ? AND room = ? AND stock >= ?
		RETURNING price, currency`), r.Quantity, productID, r.Room, r.Quantity).Scan(&o.UnitPrice, &o.Currency)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// A token that already ordered is "used", not "sold out", even once
		// the stock is gone: the caller consumes it rather than releasing it.
		if used, err := tokenOrdered(ctx, tx, r.Token); err == nil && used {
			return Order{}, errDuplicate
		}
		var left int64
		err := tx.GetContext(ctx, &left, tx.Rebind(`SELECT stock FROM products WHERE id = ? AND room = ?`), productID, r.Room)
		if err == nil && left > 0 {
			return Order{}, &StockError{Left: left}
		}
		return Order{}, errNoStock
	case err != nil:
		return Order{}, fmt.Errorf("order: take stock: %w", err)
	}
	var idem any
	if r.IdempotencyKey != "" {
		idem = r.IdempotencyKey
	}
	err = tx.QueryRowxContext(ctx, tx.Rebind(`INSERT INTO orders
		(room, product_id, visitor, quantity, entry_token_hash, idempotency_key,
		 utm_source, utm_medium, utm_campaign, utm_term, utm_content, gclid, fbclid, ttclid, public_id, unit_price, currency)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		r.Room, productID, r.Visitor, r.Quantity, TokenHash(r.Token), idem,
		null(r.UTM.Source), null(r.UTM.Medium), null(r.UTM.Campaign), null(r.UTM.Term), null(r.UTM.Content),
		null(r.UTM.Gclid), null(r.UTM.Fbclid), null(r.UTM.Ttclid), o.PublicID, o.UnitPrice, o.Currency).Scan(&o.ID)
	if err != nil {
		switch uniqueViolation(err) {
		case "token":
			return Order{}, errDuplicate
		case "idempotency":
			return Order{}, errIdemTaken
		}
		return Order{}, fmt.Errorf("order: insert: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Order{}, fmt.Errorf("order: commit: %w", err)
	}
	o.CreatedAt = time.Now()
	return o, nil
}

// checkLimit enforces r.MaxPerBuyer in the order's transaction: it locks
// the buyer's row in buyer_locks (an upsert, which waits for any other
// transaction of the same buyer in the room), then sums the buyer's placed
// orders, which a statement after the lock sees committed. So of two
// orders of one buyer at once, the second counts the first. It returns a
// *LimitError when r.Quantity more would pass the limit.
func checkLimit(ctx context.Context, tx *sqlx.Tx, r Request) error {
	if r.MaxPerBuyer <= 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO buyer_locks (room, visitor) VALUES (?, ?)
		ON CONFLICT (room, visitor) DO UPDATE SET visitor = excluded.visitor`), r.Room, r.Visitor); err != nil {
		return fmt.Errorf("order: lock buyer: %w", err)
	}
	n, err := bought(ctx, tx, r.Room, r.Visitor)
	if err != nil {
		return err
	}
	if n+r.Quantity > r.MaxPerBuyer {
		return &LimitError{Limit: r.MaxPerBuyer, Left: max(0, r.MaxPerBuyer-n)}
	}
	return nil
}

// bought returns the total quantity of visitor's placed (not cancelled)
// orders in room.
func bought(ctx context.Context, q rebinder, room, visitor string) (int, error) {
	var n int
	err := sqlx.GetContext(ctx, q, &n, q.Rebind(`SELECT COALESCE(SUM(quantity), 0) FROM orders
		WHERE room = ? AND visitor = ? AND status = ?`), room, visitor, StatusPlaced)
	if err != nil {
		return 0, fmt.Errorf("order: sum the buyer's orders: %w", err)
	}
	return n, nil
}

// tokenOrdered reports whether token has placed an order (false when the
// database does not answer).
func (s *Store) tokenOrdered(ctx context.Context, token string) bool {
	used, err := tokenOrdered(ctx, s.db, token)
	return err == nil && used
}

// rebinder is a *sqlx.DB or a *sqlx.Tx.
type rebinder interface {
	sqlx.QueryerContext
	Rebind(query string) string
}

func tokenOrdered(ctx context.Context, q rebinder, token string) (bool, error) {
	var used bool
	err := sqlx.GetContext(ctx, q, &used, q.Rebind(`SELECT EXISTS (SELECT 1 FROM orders WHERE entry_token_hash = ?)`), TokenHash(token))
	return used, err
}

func null(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// uniqueViolation names the unique constraint err broke: "token",
// "idempotency", or "" for any other error.
func uniqueViolation(err error) string {
	var pe *pq.Error
	if errors.As(err, &pe) {
		if pe.Code != "23505" {
			return ""
		}
		switch pe.Constraint {
		case "orders_entry_token_hash_key":
			return "token"
		case "orders_idempotency_key":
			return "idempotency"
		}
		return ""
	}
	msg := err.Error() // SQLite: "UNIQUE constraint failed: orders.entry_token_hash"
	switch {
	case strings.Contains(msg, "UNIQUE constraint failed: orders.entry_token_hash"):
		return "token"
	case strings.Contains(msg, "UNIQUE constraint failed: orders.room, orders.visitor, orders.idempotency_key"):
		return "idempotency"
	}
	return ""
}

// byIdempotencyKey returns the visitor's order placed with key, or
// sql.ErrNoRows.
func (s *Store) byIdempotencyKey(ctx context.Context, room, visitor, key string) (Order, error) {
	var o Order
	err := s.db.GetContext(ctx, &o, s.db.Rebind(`SELECT `+orderColumns+` FROM orders
		WHERE room = ? AND visitor = ? AND idempotency_key = ?`), room, visitor, key)
	return o, err
}

// byToken returns the order that token placed in room for visitor, or
// sql.ErrNoRows.
func (s *Store) byToken(ctx context.Context, room, visitor, token string) (Order, error) {
	var o Order
	err := s.db.GetContext(ctx, &o, s.db.Rebind(`SELECT `+orderColumns+` FROM orders
		WHERE entry_token_hash = ? AND room = ? AND visitor = ?`), TokenHash(token), room, visitor)
	return o, err
}

// orderColumns are the columns an Order is read from.
const orderColumns = `id, public_id, room, product_id, visitor, quantity, COALESCE(unit_price, -1) AS unit_price,
	COALESCE(currency, '') AS currency, created_at`

// Get returns the order of room whose public id is publicID if it belongs
// to visitor. It returns sql.ErrNoRows otherwise, so that nobody learns of
// another's order.
func (s *Store) Get(ctx context.Context, room, visitor, publicID string) (Order, error) {
	var o Order
	err := s.db.GetContext(ctx, &o, s.db.Rebind(`SELECT `+orderColumns+` FROM orders
		WHERE public_id = ? AND room = ? AND visitor = ?`), publicID, room, visitor)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Order{}, fmt.Errorf("order: get %s: %w", publicID, err)
	}
	return o, err
}

// NewPublicID returns a fresh public order number: 16 bytes from
// crypto/rand in unpadded URL-safe base64 (22 characters).
func NewPublicID() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails (crypto/rand crashes the program instead)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ValidPublicID reports whether s has the shape of a public order number
// (16 to 64 characters of the URL-safe base64 alphabet: NewPublicID's 22,
// or the 32 hex digits the SQLite migration gave older orders), so that a
// malformed one never reaches the database.
func ValidPublicID(s string) bool {
	if len(s) < 16 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// stock returns the room's catalog as the sold-out rule reads it: how many
// products it has and their stock in all.
func (s *Store) stock(ctx context.Context, room string) (Stock, error) {
	var row struct {
		Products int64 `db:"products"`
		Units    int64 `db:"units"`
	}
	err := s.db.GetContext(ctx, &row, s.db.Rebind(`SELECT COUNT(*) AS products, COALESCE(SUM(stock), 0) AS units
		FROM products WHERE room = ?`), room)
	if err != nil {
		return Stock{}, fmt.Errorf("order: stock of %s: %w", room, err)
	}
	return Stock{Products: row.Products, Units: row.Units}, nil
}
