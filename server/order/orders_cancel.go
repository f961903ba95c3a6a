package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Errors of CancelOrder.
var (
	// ErrOrderNotFound: no order of that number in the room.
	ErrOrderNotFound = errors.New("no such order in this room")
	// ErrAlreadyCancelled: the order was cancelled before; nothing changed.
	ErrAlreadyCancelled = errors.New("the order is already cancelled")
)

// cancelOrder marks room's order publicID cancelled and gives its quantity
// back to its product's stock, in one transaction. The status change is
// conditional (placed → cancelled), so of two concurrent cancels one
// restocks and the other gets ErrAlreadyCancelled. It returns the
// cancelled order, ErrOrderNotFound, ErrAlreadyCancelled or a database
// error.
func (s *Store) cancelOrder(ctx context.Context, room, publicID string) (OrderRow, error) {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return OrderRow{}, fmt.Errorf("order: begin: %w", err)
	}
	defer tx.Rollback()
	var o struct {
		ProductID int64 `db:"product_id"`
		Quantity  int64 `db:"quantity"`
	}
	err = tx.GetContext(ctx, &o, tx.Rebind(`UPDATE orders SET status = ? WHERE room = ? AND public_id = ? AND status = ?
		RETURNING product_id, quantity`), StatusCancelled, room, publicID, StatusPlaced)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		var exists bool
		if err := tx.GetContext(ctx, &exists, tx.Rebind(`SELECT EXISTS (SELECT 1 FROM orders WHERE room = ? AND public_id = ?)`),
			room, publicID); err != nil {
			return OrderRow{}, fmt.Errorf("order: find order %s: %w", publicID, err)
		}
		if exists {
			return OrderRow{}, ErrAlreadyCancelled
		}
		return OrderRow{}, ErrOrderNotFound
	case err != nil:
		return OrderRow{}, fmt.Errorf("order: cancel order %s: %w", publicID, err)
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE products SET stock = stock + ? WHERE id = ?`), o.Quantity, o.ProductID); err != nil {
		return OrderRow{}, fmt.Errorf("order: restock product %d: %w", o.ProductID, err)
	}
	var row OrderRow
	if err := tx.GetContext(ctx, &row, tx.Rebind(`SELECT `+orderRowColumns+` FROM orders o JOIN products p ON p.id = o.product_id
		WHERE o.room = ? AND o.public_id = ?`), room, publicID); err != nil {
		return OrderRow{}, fmt.Errorf("order: read cancelled order %s: %w", publicID, err)
	}
	if err := tx.Commit(); err != nil {
		return OrderRow{}, fmt.Errorf("order: commit cancel of %s: %w", publicID, err)
	}
	return row, nil
}

// CancelOrder cancels room's placed order publicID: its status becomes
// cancelled and its quantity goes back to the product's stock, which
// reopens a sold-out room. It returns the cancelled order,
// ErrOrderNotFound, ErrAlreadyCancelled (a second cancel changes nothing)
// or ErrUnavailable.
func (s *Service) CancelOrder(ctx context.Context, roomName, publicID string) (OrderRow, error) {
	if !ValidPublicID(publicID) {
		return OrderRow{}, ErrOrderNotFound
	}
	o, err := s.store.cancelOrder(ctx, roomName, publicID)
	switch {
	case err == nil:
	case errors.Is(err, ErrOrderNotFound), errors.Is(err, ErrAlreadyCancelled):
		return OrderRow{}, err
	default:
		s.log.Warn("order: cancel", "room", roomName, "err", err)
		return OrderRow{}, ErrUnavailable
	}
	s.ForgetProducts(roomName)
	s.settleSoldOut(ctx, roomName)
	return o, nil
}
