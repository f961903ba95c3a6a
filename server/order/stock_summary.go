package order

import (
	"context"
	"fmt"
)

// StockSummary is a room's sales against its stock, for the dashboard.
type StockSummary struct {
	// Orders counts the room's placed orders (cancelled ones are not).
	Orders int64
	// Sold is the units of those orders.
	Sold int64
	// Left is the stock left over the room's products.
	Left int64
}

// StockSummary returns room's placed orders, units sold and stock left,
// read in one statement.
func (s *Service) StockSummary(ctx context.Context, room string) (StockSummary, error) {
	return s.store.stockSummary(ctx, room)
}

func (s *Store) stockSummary(ctx context.Context, room string) (StockSummary, error) {
	var sum StockSummary
	err := s.db.QueryRowxContext(ctx, s.db.Rebind(`SELECT
		(SELECT COUNT(*) FROM orders WHERE room = ? AND status = 'placed'),
		(SELECT COALESCE(SUM(quantity), 0) FROM orders WHERE room = ? AND status = 'placed'),
		(SELECT COALESCE(SUM(stock), 0) FROM products WHERE room = ?)`), room, room, room).
		Scan(&sum.Orders, &sum.Sold, &sum.Left)
	if err != nil {
		return StockSummary{}, fmt.Errorf("order: stock summary of %s: %w", room, err)
	}
	return sum, nil
}
