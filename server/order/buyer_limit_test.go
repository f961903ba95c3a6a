package order

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"waitingroom/server/room"
	"waitingroom/server/store"
	"waitingroom/server/visitor"
)

// admit enters visitor v (again) and admits them with a fresh pass; it
// returns the pass.
func (e *env) admit(t *testing.T, v string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := e.eng.Enter(ctx, e.room, v); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
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
