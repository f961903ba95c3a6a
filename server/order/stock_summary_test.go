package order

import (
	"context"
	"testing"

	"waitingroom/server/store"
)

// TestStockSummary: placed orders and their units count, cancelled ones
// and other rooms' do not, and the stock left sums the room's products.
func TestStockSummary(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, 10, 5)
			ctx := context.Background()
			if got, err := e.svc.StockSummary(ctx, e.room); err != nil || got != (StockSummary{Left: 15}) {
				t.Fatalf("before any order: %+v %v", got, err)
			}
			vs, toks := e.buyers(t, 3)
			for i, q := range []int{2, 1, 3} {
				if _, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[i], Token: toks[i], ProductID: e.prods[i%2], Quantity: q}); err != nil {
					t.Fatal(err)
				}
			}
			// An operator cancels the last order (H3b's CancelOrder does
			// this and gives the stock back; here only the status matters).
			if _, err := e.db.Exec(e.db.Rebind(`UPDATE orders SET status = 'cancelled' WHERE room = ? AND quantity = 3`), e.room); err != nil {
				t.Fatal(err)
			}
			want := StockSummary{Orders: 2, Sold: 3, Left: 15 - 6}
			if got, err := e.svc.StockSummary(ctx, e.room); err != nil || got != want {
				t.Fatalf("got %+v %v, want %+v", got, err, want)
			}
			if got, err := e.svc.StockSummary(ctx, "no-such-room"); err != nil || got != (StockSummary{}) {
				t.Fatalf("another room: %+v %v", got, err)
			}
		})
	}
}
