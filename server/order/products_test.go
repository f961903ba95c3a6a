package order

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/server/store"

	"github.com/jonboulle/clockwork"
)

// TestProductListIsCached: a flood of product reads costs one query,
// the list is read again once ProductsTTL has passed, and it is fresh
// after an order on this instance. The cache's clock moves only when the
// test moves it: however long the flood takes to start, it reads within
// one ProductsTTL.
func TestProductListIsCached(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 10)
	var queries atomic.Int64
	load := e.svc.products.load
	started := make(chan struct{})
	e.svc.products = newProductCache(func(ctx context.Context, room string) ([]Product, error) {
		if queries.Add(1) == 1 {
			<-started // the first query holds until every reader has started: the flood piles up behind it
		}
		return load(ctx, room)
	}, ProductsTTL)
	clock := clockwork.NewFakeClockAt(time.Now())
	e.svc.products.now = clock.Now

	ctx := context.Background()
	read := func(what string) []Product {
		t.Helper()
		ps, err := e.svc.Products(ctx, e.room)
		if err != nil || len(ps) != 1 {
			t.Fatalf("products %s: %v %v", what, ps, err)
		}
		return ps
	}
	var wg sync.WaitGroup
	for range 500 {
		wg.Go(func() {
			if ps, err := e.svc.Products(ctx, e.room); err != nil || len(ps) != 1 {
				t.Errorf("products: %v %v", ps, err)
			}
		})
	}
	close(started)
	wg.Wait()
	if n := queries.Load(); n != 1 {
		t.Fatalf("500 concurrent product reads ran %d queries, want 1", n)
	}
	clock.Advance(ProductsTTL - time.Nanosecond)
	read("just within ProductsTTL")
	if n := queries.Load(); n != 1 {
		t.Fatalf("a read within ProductsTTL ran %d queries, want the one", n)
	}
	clock.Advance(time.Nanosecond)
	read("after ProductsTTL")
	if n := queries.Load(); n != 2 {
		t.Fatalf("a read after ProductsTTL ran %d queries in all, want 2", n)
	}

	vs, toks := e.buyers(t, 1)
	if _, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 4}); err != nil {
		t.Fatal(err)
	}
	if ps := read("after an order"); ps[0].Stock != 6 {
		t.Fatalf("after an order: %+v, want stock 6 at once", ps)
	}
}
