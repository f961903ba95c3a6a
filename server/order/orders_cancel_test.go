package order

import (
	"context"
	"errors"
	"testing"

	"waitingroom/server/store"
)

// TestCancelOrder: a cancel gives the stock back and reopens a sold-out
// room; a second cancel is refused and changes nothing.
func TestCancelOrder(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, 2)
			ctx := context.Background()
			soldOut := func() bool {
				t.Helper()
				st, err := e.eng.Stats(ctx, e.room)
				if err != nil {
					t.Fatal(err)
				}
				return st.SoldOut
			}
			vs, toks := e.buyers(t, 1)
			o, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 2})
			if err != nil {
				t.Fatal(err)
			}
			if !soldOut() || e.stock(t, e.prods[0]) != 0 {
				t.Fatal("the room did not sell out")
			}
			if _, err := e.svc.CancelOrder(ctx, "other-room", o.PublicID); !errors.Is(err, ErrOrderNotFound) {
				t.Fatalf("cancel from another room: %v", err)
			}
			for _, id := range []string{NewPublicID(), "short", "bad id with spaces!!"} {
				if _, err := e.svc.CancelOrder(ctx, e.room, id); !errors.Is(err, ErrOrderNotFound) {
					t.Fatalf("cancel of %q: %v", id, err)
				}
			}
			c, err := e.svc.CancelOrder(ctx, e.room, o.PublicID)
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != StatusCancelled || c.PublicID != o.PublicID || c.Quantity != 2 {
				t.Fatalf("cancelled %+v", c)
			}
			if got := e.stock(t, e.prods[0]); got != 2 {
				t.Fatalf("stock %d after the cancel, want 2", got)
			}
			if soldOut() {
				t.Fatal("the restock did not reopen the room")
			}
			if ps, _ := e.svc.Products(ctx, e.room); len(ps) != 1 || ps[0].Stock != 2 {
				t.Fatalf("the cached products missed the restock: %+v", ps)
			}
			if _, err := e.svc.CancelOrder(ctx, e.room, o.PublicID); !errors.Is(err, ErrAlreadyCancelled) {
				t.Fatalf("second cancel: %v, want ErrAlreadyCancelled", err)
			}
			if got := e.stock(t, e.prods[0]); got != 2 {
				t.Fatalf("stock %d after a second cancel, want 2", got)
			}
			rows, err := e.svc.ListOrders(ctx, OrderFilter{Room: e.room, Status: StatusCancelled})
			if err != nil || len(rows) != 1 || rows[0].PublicID != o.PublicID {
				t.Fatalf("cancelled orders: %+v %v", rows, err)
			}
		})
	}
}

// TestConcurrentCancelsRestockOnce: of many cancels at once, one wins.
func TestConcurrentCancelsRestockOnce(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 5)
	ctx := context.Background()
	vs, toks := e.buyers(t, 1)
	o, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 3})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() { _, err := e.svc.CancelOrder(ctx, e.room, o.PublicID); errs <- err }()
	}
	won := 0
	for range 8 {
		switch err := <-errs; {
		case err == nil:
			won++
		case !errors.Is(err, ErrAlreadyCancelled):
			t.Fatal(err)
		}
	}
	if won != 1 || e.stock(t, e.prods[0]) != 5 {
		t.Fatalf("%d cancels won, stock %d; want 1 and 5", won, e.stock(t, e.prods[0]))
	}
}
