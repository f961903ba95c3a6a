package order

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/store"
	"waitingroom/server/visitor"
)

// TestInvalidOrdersDoNotDrainTheBucket: five admitted bots loop on an
// unknown product with their own tokens, against a bucket of 2 refilled at
// 1/s. The product is checked before the bucket, so they take no slot
// (a real buyer would get 429 after 429), and the buyer orders on the
// first or second try.
func TestInvalidOrdersDoNotDrainTheBucket(t *testing.T) {
	e := newEnv(t, store.Postgres, func(s *room.Settings) { s.OrderRate, s.OrderBurst = 1, 2 }, 100)
	vs, toks := e.buyers(t, 6)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var tries, paused atomic.Int64
	for i := range 5 {
		wg.Go(func() {
			for ctx.Err() == nil {
				_, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[i], Token: toks[i], ProductID: 999999, Quantity: 1})
				tries.Add(1)
				if errors.Is(err, ErrTokenPaused) {
					paused.Add(1)
				}
			}
		})
	}
	// The bots keep trying while the clock runs on: the bucket would
	// drain, and refill, several times.
	for deadline := time.Now().Add(30 * time.Second); tries.Load() < 50; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the bots tried %d times in 30 s", tries.Load())
		}
		e.clock.Advance(30 * time.Millisecond)
	}
	buyer := Request{Room: e.room, Visitor: vs[5], Token: toks[5], Quantity: 1}
	var err error
	for try := 1; try <= 2; try++ {
		if _, err = e.svc.Place(context.Background(), buyer); err == nil {
			t.Logf("the buyer ordered on try %d, against %d bot attempts (%d refused as paused)", try, tries.Load(), paused.Load())
			break
		}
		var rl *RateLimitedError
		if errors.As(err, &rl) {
			e.clock.Advance(rl.RetryAfter)
		}
	}
	stop()
	wg.Wait()
	if err != nil {
		t.Fatalf("the real buyer could not order in two tries: %v", err)
	}
	if e.orders(t) != 1 {
		t.Fatalf("%d orders", e.orders(t))
	}
	if paused.Load() == 0 {
		t.Fatal("the bots' tokens were never paused after repeated failures")
	}
}

// TestFailedAttemptsPauseTheToken: after queue.MaxFailedAttempts invalid
// orders the token rests (429 with the time left), then works again.
func TestFailedAttemptsPauseTheToken(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 10)
	e.svc.failPause = 400 * time.Millisecond
	vs, toks := e.buyers(t, 1)
	ctx := context.Background()
	bad := Request{Room: e.room, Visitor: vs[0], Token: toks[0], ProductID: 999999, Quantity: 1}
	for i := range queue.MaxFailedAttempts {
		if _, err := e.svc.Place(ctx, bad); !errors.Is(err, ErrProductNotFound) {
			t.Fatalf("failed attempt %d: %v, want ErrProductNotFound", i+1, err)
		}
	}
	good := bad
	good.ProductID = e.prods[0]
	_, err := e.svc.Place(ctx, good)
	var wait *WaitError
	if !errors.Is(err, ErrTokenPaused) || !errors.As(err, &wait) || wait.RetryAfter <= 0 || wait.RetryAfter > 400*time.Millisecond {
		t.Fatalf("after %d failures: %v, want ErrTokenPaused with the pause left", queue.MaxFailedAttempts, err)
	}
	e.clock.Advance(wait.RetryAfter + 20*time.Millisecond)
	if _, err := e.svc.Place(ctx, good); err != nil {
		t.Fatalf("after the pause: %v", err)
	}
}

// TestRefusedOrdersRefundTheBucket: an order refused by the database (the
// cached stock was stale: another instance sold the last item) gives its
// bucket slot back, so the next buyer is not rate limited.
func TestRefusedOrdersRefundTheBucket(t *testing.T) {
	e := newEnv(t, store.Postgres, func(s *room.Settings) { s.OrderRate, s.OrderBurst = 0.01, 1 }, 1, 5)
	vs, toks := e.buyers(t, 2)
	ctx := context.Background()
	if _, err := e.svc.Products(ctx, e.room); err != nil { // this instance caches stock 1
		t.Fatal(err)
	}
	if _, err := e.db.Exec(e.db.Rebind(`UPDATE products SET stock = 0 WHERE id = ?`), e.prods[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[0], Token: toks[0], ProductID: e.prods[0], Quantity: 1}); !errors.Is(err, ErrSoldOut) {
		t.Fatalf("order of the item sold elsewhere: %v, want ErrSoldOut", err)
	}
	if _, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[1], Token: toks[1], ProductID: e.prods[1], Quantity: 1}); err != nil {
		t.Fatalf("the next buyer: %v; the refused order kept the bucket's only slot", err)
	}
}

// TestStaleStockSaysHowManyLeft: an order for more than is left, while the
// cached stock still says enough (another instance sold some), is told how
// many are left, not that the product is sold out; the token stays usable
// for a smaller order.
func TestStaleStockSaysHowManyLeft(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 5)
	vs, toks := e.buyers(t, 1)
	ctx := context.Background()
	if _, err := e.svc.Products(ctx, e.room); err != nil { // this instance caches stock 5
		t.Fatal(err)
	}
	if _, err := e.db.Exec(e.db.Rebind(`UPDATE products SET stock = 2 WHERE id = ?`), e.prods[0]); err != nil {
		t.Fatal(err)
	}
	req := Request{Room: e.room, Visitor: vs[0], Token: toks[0], ProductID: e.prods[0], Quantity: 3}
	var short *StockError
	if _, err := e.svc.Place(ctx, req); !errors.As(err, &short) || short.Left != 2 || errors.Is(err, ErrSoldOut) {
		t.Fatalf("order of 3 with 2 left: %v, want a StockError of 2 left", err)
	}
	req.Quantity = 2
	if _, err := e.svc.Place(ctx, req); err != nil {
		t.Fatalf("order of the 2 left: %v", err)
	}
}

// TestRetryAfterSuccessSaysUsed: a retry of an order that succeeded is
// told the token was used (409 token_used), not that it is invalid.
func TestRetryAfterSuccessSaysUsed(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 10)
	vs, toks := e.buyers(t, 1)
	ctx := context.Background()
	req := Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 1}
	if _, err := e.svc.Place(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Place(ctx, req); !errors.Is(err, ErrTokenUsed) {
		t.Fatalf("retry after success: %v, want ErrTokenUsed", err)
	}
}

// TestBogusOrdersCannotKeepATokenAlive: with a 10 s pass, a bogus order
// every 2 s must not raise the pass (and its maxActive slot) to 30 s at
// every claim, holding the next visitor out: the pass ends at 10 s, and
// the next visitor gets the slot.
func TestBogusOrdersCannotKeepATokenAlive(t *testing.T) {
	e := newEnv(t, store.Postgres, func(s *room.Settings) { s.TokenTTLSeconds, s.MaxActive = room.MinTokenTTL, 1 }, 10)
	vs, toks := e.buyers(t, 1)
	ctx := context.Background()
	next := e.enter(t)
	start := e.clock.Now()
	bogus := Request{Room: e.room, Visitor: vs[0], Token: toks[0], ProductID: 999999, Quantity: 1}
	for e.clock.Now().Sub(start) < 9*time.Second {
		e.svc.Place(ctx, bogus)
		e.clock.Advance(2 * time.Second)
	}
	e.clock.Advance(start.Add(10*time.Second + 300*time.Millisecond).Sub(e.clock.Now()))
	bogus.ProductID = e.prods[0]
	if _, err := e.svc.Place(ctx, bogus); !errors.Is(err, ErrTokenInvalid) {
		t.Fatalf("the 10 s pass after %v: %v, want ErrTokenInvalid", e.clock.Now().Sub(start), err)
	}
	a, err := e.eng.Admit(ctx, e.room, time.Second, []string{tokenFor(t)})
	if err != nil || len(a.Visitors) != 1 || a.Visitors[0] != next {
		t.Fatalf("the next visitor was not admitted into the freed slot: %+v %v", a, err)
	}
	if st, _ := e.eng.Stats(ctx, e.room); st.Expired != 1 {
		t.Fatalf("expired passes %d, want 1", st.Expired)
	}
}

// blippingGate loses the first releases, as a Redis blip would.
type blippingGate struct {
	*queue.Engine
	lost atomic.Int32
}

func (g *blippingGate) Release(ctx context.Context, room, visitor, holder string, pause time.Duration) error {
	if g.lost.Add(-1) >= 0 {
		return errors.New("simulated: connection reset by peer")
	}
	return g.Engine.Release(ctx, room, visitor, holder, pause)
}

// TestReleaseIsRetriedAfterABlip: a release that Redis did not answer is
// retried, so the buyer's token is not locked for the claim's 30 s.
func TestReleaseIsRetriedAfterABlip(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 10)
	g := &blippingGate{Engine: e.eng}
	g.lost.Store(2)
	svc := NewService(NewStore(e.db.DB, 0), g, 0, quiet)
	vs, toks := e.buyers(t, 1)
	ctx := context.Background()
	req := Request{Room: e.room, Visitor: vs[0], Token: toks[0], ProductID: 999999, Quantity: 1}
	if _, err := svc.Place(ctx, req); !errors.Is(err, ErrProductNotFound) {
		t.Fatalf("bogus order: %v", err)
	}
	req.ProductID = e.prods[0]
	if _, err := svc.Place(ctx, req); err != nil {
		t.Fatalf("retry right after the blip: %v; the claim was never released", err)
	}
}

// enter puts a new visitor in the line and returns their id.
func (e *env) enter(t *testing.T) string {
	t.Helper()
	v, _ := visitor.NewID()
	if _, err := e.eng.Enter(context.Background(), e.room, v); err != nil {
		t.Fatal(err)
	}
	return v
}

// admit enters visitor v (again) and admits them with a fresh pass; it
// returns the pass.
func (e *env) admit(t *testing.T, v string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := e.eng.Enter(ctx, e.room, v); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(10 * time.Millisecond) // credit for the admission
	if a, err := e.eng.Admit(ctx, e.room, time.Second, []string{tokenFor(t)}); err != nil || len(a.Visitors) != 1 {
		t.Fatalf("admit %s: %+v %v", v, a, err)
	}
	p, err := e.eng.Position(ctx, e.room, v)
	if err != nil || p.EntryToken == nil {
		t.Fatalf("position: %+v %v", p, err)
	}
	return *p.EntryToken
}

// TestLimitPerBuyer: a room's maxPerBuyer caps the total of one buyer's
// placed orders across their passes, refuses with how many are left before
// the pass is claimed (the pass still orders), counts cancelled orders
// out, and 0 leaves only the limit of MaxQuantity per order.
func TestLimitPerBuyer(t *testing.T) {
	type step struct {
		name     string
		newPass  bool // a new admission of the same buyer
		quantity int
		idem     string
		cancel   int  // cancel the order of this step (1-based) first
		wantLeft int  // -1: placed; else a *LimitError with this Left
		badQty   bool // want ErrBadQuantity
	}
	tests := []struct {
		name        string
		maxPerBuyer int
		steps       []step
	}{
		{"limit of 3", 3, []step{
			{name: "first order within the limit", newPass: true, quantity: 2, wantLeft: -1},
			{name: "a second pass over the limit", newPass: true, quantity: 2, wantLeft: 1},
			{name: "the refused pass orders what is left", quantity: 1, wantLeft: -1},
			{name: "a third pass once the limit is reached", newPass: true, quantity: 1, wantLeft: 0},
			{name: "a cancelled order frees its quantity", cancel: 1, quantity: 2, wantLeft: -1},
			{name: "over a limit filled again", newPass: true, quantity: 1, wantLeft: 0},
		}},
		{"a retry of the order that reached the limit gets its order", 2, []step{
			{name: "order up to the limit", newPass: true, quantity: 2, idem: "k1", wantLeft: -1},
			{name: "its retry", quantity: 2, idem: "k1", wantLeft: -1},
		}},
		{"no limit per buyer", 0, []step{
			{name: "a full order", newPass: true, quantity: MaxQuantity, wantLeft: -1},
			{name: "another full order", newPass: true, quantity: MaxQuantity, wantLeft: -1},
			{name: "over the limit per order", newPass: true, quantity: MaxQuantity + 1, badQty: true},
		}},
	}
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		for _, tt := range tests {
			t.Run(dialect+"/"+tt.name, func(t *testing.T) {
				e := newEnv(t, dialect, func(s *room.Settings) { s.MaxPerBuyer = tt.maxPerBuyer }, 100)
				ctx := context.Background()
				v, _ := visitor.NewID()
				var tok string
				placed := map[int]Order{}
				for i, st := range tt.steps {
					if st.cancel > 0 {
						if _, err := e.svc.CancelOrder(ctx, e.room, placed[st.cancel].PublicID); err != nil {
							t.Fatalf("%s: cancel: %v", st.name, err)
						}
					}
					if st.newPass {
						tok = e.admit(t, v)
					}
					o, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: v, Token: tok, Quantity: st.quantity,
						MaxPerBuyer: tt.maxPerBuyer, IdempotencyKey: st.idem})
					var lim *LimitError
					switch {
					case st.badQty:
						if !errors.Is(err, ErrBadQuantity) {
							t.Fatalf("%s: %v, want ErrBadQuantity", st.name, err)
						}
					case st.wantLeft < 0:
						if err != nil {
							t.Fatalf("%s: %v, want an order", st.name, err)
						}
						if st.idem != "" && i > 0 && tt.steps[i-1].idem == st.idem && o.PublicID != placed[i].PublicID {
							t.Fatalf("%s: order %s, want the first's %s", st.name, o.PublicID, placed[i].PublicID)
						}
						placed[i+1] = o
					case !errors.As(err, &lim) || lim.Limit != tt.maxPerBuyer || lim.Left != st.wantLeft:
						t.Fatalf("%s: %v, want a limit of %d with %d left", st.name, err, tt.maxPerBuyer, st.wantLeft)
					default:
						// Refused before the claim: the pass is untouched,
						// neither claimed nor counted as a failure.
						p, err := e.eng.Position(ctx, e.room, v)
						if err != nil || p.EntryToken == nil || *p.EntryToken != tok {
							t.Fatalf("%s: the refused pass is gone: %+v %v", st.name, p, err)
						}
					}
				}
			})
		}
	}
}

// TestLimitPerBuyerRace: one buyer's orders at once, with as many passes,
// never take their total past the limit: the transaction counts under the
// buyer's lock.
func TestLimitPerBuyerRace(t *testing.T) {
	const limit, n = 3, 12
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, 100)
			ctx := context.Background()
			v, _ := visitor.NewID()
			var wg sync.WaitGroup
			errs := make(chan error, n)
			start := make(chan struct{})
			for range n {
				r := Request{Room: e.room, Visitor: v, Token: tokenFor(t), Quantity: 1, MaxPerBuyer: limit}
				wg.Go(func() {
					<-start
					_, err := e.svc.store.place(ctx, r, e.prods[0])
					errs <- err
				})
			}
			close(start)
			wg.Wait()
			close(errs)
			var ok, over int
			for err := range errs {
				switch {
				case err == nil:
					ok++
				case errors.Is(err, ErrOverLimit):
					over++
				default:
					t.Errorf("place: %v", err)
				}
			}
			got, err := bought(ctx, e.db.DB, e.room, v)
			if ok != limit || over != n-limit || err != nil || got != limit {
				t.Fatalf("%d placed, %d over the limit, %d bought (%v); want %d, %d, %d", ok, over, got, err, limit, n-limit, limit)
			}
		})
	}
}
