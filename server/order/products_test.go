package order

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/server/store"
)

// TestProductListIsCached: a flood of product reads costs one query, and
// the list is fresh after an order on this instance.
func TestProductListIsCached(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 10)
	var queries atomic.Int64
	load := e.svc.products.load
	e.svc.products = newProductCache(func(ctx context.Context, room string) ([]Product, error) {
		queries.Add(1)
		time.Sleep(20 * time.Millisecond) // a slow database: the flood piles up behind one query
		return load(ctx, room)
	}, time.Hour) // not ProductsTTL: under -race on a loaded machine, starting 500 readers can take longer than 1 s, and a late reader would rightly refresh

	ctx := context.Background()
	var wg sync.WaitGroup
	for range 500 {
		wg.Go(func() {
			if ps, err := e.svc.Products(ctx, e.room); err != nil || len(ps) != 1 {
				t.Errorf("products: %v %v", ps, err)
			}
		})
	}
	wg.Wait()
	if n := queries.Load(); n != 1 {
		t.Fatalf("500 concurrent product reads ran %d queries, want 1", n)
	}
	vs, toks := e.buyers(t, 1)
	if _, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 4}); err != nil {
		t.Fatal(err)
	}
	ps, _ := e.svc.Products(ctx, e.room)
	if len(ps) != 1 || ps[0].Stock != 6 {
		t.Fatalf("after an order: %+v, want stock 6 at once", ps)
	}
}
