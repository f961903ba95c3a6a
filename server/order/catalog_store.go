package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/lib/pq"
)

// productColumns are the columns a Product is read from.
const productColumns = `id, name, price, currency, stock, image_url`

func (s *Store) postgres() bool { return s.db.DriverName() == "postgres" }

// createProduct inserts p into room and returns it with its id.
func (s *Store) createProduct(ctx context.Context, room string, p Product) (Product, error) {
	err := s.db.QueryRowxContext(ctx, s.db.Rebind(`INSERT INTO products (room, name, price, currency, stock, image_url)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING id`), room, p.Name, p.Price, p.Currency, p.Stock, p.ImageURL).Scan(&p.ID)
	if err != nil {
		return Product{}, fmt.Errorf("order: create product in %s: %w", room, err)
	}
	return p, nil
}

// updateProduct applies patch to product id of room in one transaction and
// returns the product before and after. It returns ErrProductNotFound, an
// InvalidProductError, or a database error.
func (s *Store) updateProduct(ctx context.Context, room string, id int64, patch ProductPatch) (before, after Product, err error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return Product{}, Product{}, fmt.Errorf("order: begin: %w", err)
	}
	defer tx.Rollback()
	q := `SELECT ` + productColumns + ` FROM products WHERE id = ? AND room = ?`
	if s.postgres() {
		q += ` FOR UPDATE` // concurrent admin writes apply one after the other
	}
	if err := tx.GetContext(ctx, &before, tx.Rebind(q), id, room); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Product{}, Product{}, ErrProductNotFound
		}
		return Product{}, Product{}, fmt.Errorf("order: read product %d: %w", id, err)
	}
	after = patch.Apply(before)
	if err := after.Validate(); err != nil {
		return Product{}, Product{}, err
	}
	_, err = tx.ExecContext(ctx, tx.Rebind(`UPDATE products SET name = ?, price = ?, currency = ?, stock = ?, image_url = ? WHERE id = ? AND room = ?`),
		after.Name, after.Price, after.Currency, after.Stock, after.ImageURL, id, room)
	if err != nil {
		return Product{}, Product{}, fmt.Errorf("order: update product %d: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return Product{}, Product{}, fmt.Errorf("order: commit product %d: %w", id, err)
	}
	return before, after, nil
}

// deleteProduct deletes product id of room unless an order refers to it.
// It returns ErrProductNotFound, ErrProductHasOrders or a database error.
func (s *Store) deleteProduct(ctx context.Context, room string, id int64) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("order: begin: %w", err)
	}
	defer tx.Rollback()
	var ordered bool
	if err := tx.GetContext(ctx, &ordered, tx.Rebind(`SELECT EXISTS (SELECT 1 FROM orders WHERE product_id = ?)`), id); err != nil {
		return fmt.Errorf("order: orders of product %d: %w", id, err)
	}
	if ordered {
		return ErrProductHasOrders
	}
	res, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM products WHERE id = ? AND room = ?`), id, room)
	if err != nil {
		// An order committed between the check and the delete.
		if foreignKeyViolation(err) {
			return ErrProductHasOrders
		}
		return fmt.Errorf("order: delete product %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("order: delete product %d: %w", id, err)
	} else if n == 0 {
		return ErrProductNotFound
	}
	if err := tx.Commit(); err != nil {
		if foreignKeyViolation(err) {
			return ErrProductHasOrders
		}
		return fmt.Errorf("order: commit delete of product %d: %w", id, err)
	}
	return nil
}

func foreignKeyViolation(err error) bool {
	var pe *pq.Error
	if errors.As(err, &pe) {
		return pe.Code == "23503"
	}
	return strings.Contains(err.Error(), "FOREIGN KEY constraint failed")
}

// seedLock is the PostgreSQL advisory lock that serialises seeding between
// instances started together.
const seedLock = 0x77726f6f6d // "wroom"

// seedProduct inserts p into room when the room has no product at all, and
// reports whether it did. Instances started together insert it once.
func (s *Store) seedProduct(ctx context.Context, room string, p Product) (bool, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("order: begin: %w", err)
	}
	defer tx.Rollback()
	if s.postgres() {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, seedLock); err != nil {
			return false, fmt.Errorf("order: seed lock: %w", err)
		}
	}
	var has bool
	if err := tx.GetContext(ctx, &has, tx.Rebind(`SELECT EXISTS (SELECT 1 FROM products WHERE room = ?)`), room); err != nil {
		return false, fmt.Errorf("order: products of %s: %w", room, err)
	}
	if has {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO products (room, name, price, currency, stock, image_url) VALUES (?, ?, ?, ?, ?, ?)`),
		room, p.Name, p.Price, p.Currency, p.Stock, p.ImageURL); err != nil {
		return false, fmt.Errorf("order: seed product in %s: %w", room, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("order: commit seed of %s: %w", room, err)
	}
	return true, nil
}
