package salelog

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/servicetest"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
	"waitingroom/server/token"
	"waitingroom/server/visitor"

	"github.com/jonboulle/clockwork"
)

type observed struct {
	room, reason string
	took         time.Duration
}

type observer struct {
	mu  sync.Mutex
	got []observed
}

func (o *observer) ObserveOrder(room, reason string, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.got = append(o.got, observed{room, reason, took})
}

// TestOrdersAreObserved places a real order, replays its token and sends
// none: every observer sees each attempt with its reason.
func TestOrdersAreObserved(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	clock := clockwork.NewFakeClockAt(time.Now())
	eng.SetClock(clock.Now)
	name := servicetest.RoomName(t, rdb)
	newRoom(t, eng, name, 0, 0)
	db := storetest.Migrated(t, store.SQLite)
	var product int64
	if err := db.QueryRowx(db.Rebind(`INSERT INTO products (room, name, price, stock) VALUES (?, ?, ?, ?) RETURNING id`),
		name, "product", 1000, 5).Scan(&product); err != nil {
		t.Fatal(err)
	}
	v, _ := visitor.NewID()
	if _, err := eng.Enter(ctx, name, v); err != nil {
		t.Fatal(err)
	}
	clock.Advance(20 * time.Millisecond)
	toks, _ := token.NewBatch(1)
	if a, err := eng.Admit(ctx, name, time.Second, toks); err != nil || len(a.Visitors) != 1 {
		t.Fatalf("admit: %+v %v", a, err)
	}
	p, _ := eng.Position(ctx, name, v)
	if p.EntryToken == nil {
		t.Fatalf("no pass: %+v", p)
	}
	l, _ := newLog(eng)
	one, two := &observer{}, &observer{}
	orders := l.CountOrders(order.NewService(order.NewStore(db.DB, 0), eng, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))).Observe(one, two)
	req := order.Request{Room: name, Visitor: v, Token: *p.EntryToken, ProductID: product, Quantity: 1}
	if _, err := orders.Place(ctx, req); err != nil {
		t.Fatal(err)
	}
	orders.Place(ctx, req) // the token is used now
	req.Token = ""
	orders.Place(ctx, req)
	want := []string{"placed", "token_used", "token_missing"}
	for _, o := range []*observer{one, two} {
		if len(o.got) != len(want) {
			t.Fatalf("observed %+v, want %v", o.got, want)
		}
		for i, g := range o.got {
			if g.room != name || g.reason != want[i] || g.took <= 0 || g.took > 10*time.Second {
				t.Errorf("attempt %d observed as %+v, want %s", i, g, want[i])
			}
		}
	}
}
