package order

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
	"waitingroom/server/visitor"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// env is one room on real Redis with its products in a fresh PostgreSQL
// schema (or the embedded SQLite). Its engine decides by clock, which
// moves only when the test moves it.
type env struct {
	svc   *Service
	eng   *queue.Engine
	clock *clockwork.FakeClock
	db    *store.DB
	rdb   redis.UniversalClient
	room  string
	prods []int64
}

func openDB(t *testing.T, dialect string) *store.DB {
	t.Helper()
	return storetest.Migrated(t, dialect)
}

func newEnv(t *testing.T, dialect string, set func(*room.Settings), stocks ...int64) *env {
	t.Helper()
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	start, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	clock := clockwork.NewFakeClockAt(start)
	eng.SetClock(clock.Now)
	name := servicetest.RoomName(t, rdb)
	s := room.Defaults(name)
	s.Rate, s.OrderRate, s.OrderBurst = room.MaxRate, room.MaxRate, 100000
	if set != nil {
		set(&s)
	}
	if err := eng.SaveRoom(context.Background(), name, s); err != nil {
		t.Fatal(err)
	}
	eng.Admit(context.Background(), name, time.Second, nil) // start the rate clock
	db := openDB(t, dialect)
	e := &env{svc: NewService(NewStore(db.DB, 0), eng, 0, quiet), eng: eng, clock: clock, db: db, rdb: rdb, room: name}
	for i, stock := range stocks {
		var id int64
		err := db.QueryRowx(db.Rebind(`INSERT INTO products (room, name, price, stock) VALUES (?, ?, ?, ?) RETURNING id`),
			name, "product", 1000*(i+1), stock).Scan(&id)
		if err != nil {
			t.Fatal(err)
		}
		e.prods = append(e.prods, id)
	}
	return e
}

// buyers enters n visitors and admits them all; it returns their ids and
// tokens.
func (e *env) buyers(t *testing.T, n int) (vs, toks []string) {
	t.Helper()
	ctx := context.Background()
	for range n {
		v, _ := visitor.NewID()
		if _, err := e.eng.Enter(ctx, e.room, v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	e.clock.Advance(10 * time.Millisecond) // credit for the admissions
	fresh := make([]string, n)
	for i := range fresh {
		fresh[i] = tokenFor(t)
	}
	if a, err := e.eng.Admit(ctx, e.room, time.Second, fresh); err != nil || len(a.Visitors) != n {
		t.Fatalf("admit %d: %+v %v", n, a, err)
	}
	for _, v := range vs {
		p, err := e.eng.Position(ctx, e.room, v)
		if err != nil || p.EntryToken == nil {
			t.Fatalf("position: %+v %v", p, err)
		}
		toks = append(toks, *p.EntryToken)
	}
	return vs, toks
}

func tokenFor(t *testing.T) string {
	t.Helper()
	v, err := visitor.NewID() // 16 random bytes; tokens need 32
	if err != nil {
		t.Fatal(err)
	}
	w, _ := visitor.NewID()
	return (v + w + "AAAAAAAAAAAAAAAAAAAAAA")[:42] + "A"
}

func (e *env) orders(t *testing.T) int {
	t.Helper()
	var n int
	if err := e.db.Get(&n, e.db.Rebind(`SELECT COUNT(*) FROM orders WHERE room = ?`), e.room); err != nil {
		t.Fatal(err)
	}
	return n
}

func (e *env) stock(t *testing.T, id int64) int64 {
	t.Helper()
	var n int64
	if err := e.db.Get(&n, e.db.Rebind(`SELECT stock FROM products WHERE id = ?`), id); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTokensAreCheckedBeforeTheDatabase(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 10)
	vs, toks := e.buyers(t, 2)
	ctx := context.Background()
	e.eng.Leave(ctx, e.room, vs[1]) // the second pass is gone
	tests := []struct {
		name    string
		visitor string
		token   string
		want    error
	}{
		{"no token", vs[0], "", ErrTokenMissing},
		{"malformed", vs[0], "not-a-token", ErrTokenInvalid},
		{"wrong token", vs[0], tokenFor(t), ErrTokenInvalid},
		{"another visitor's token", vs[0], toks[1], ErrTokenInvalid},
		{"someone else using mine", vs[1], toks[0], ErrTokenInvalid},
		{"gone", vs[1], toks[1], ErrTokenInvalid},
	}
	// The database is closed: a check that reached it would say
	// ErrUnavailable instead.
	e.db.Close()
	for _, tt := range tests {
		_, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: tt.visitor, Token: tt.token, Quantity: 1})
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestValidOrderConsumesTheToken(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, 10)
			vs, toks := e.buyers(t, 1)
			ctx := context.Background()
			o, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 3,
				UTM: UTM{Source: "newsletter", Campaign: "bf", Content: "hero", Gclid: "Cj0KCQ-abc_123", Fbclid: "IwAR0x", Ttclid: "E.C.P.x1"}})
			if err != nil {
				t.Fatal(err)
			}
			if o.ID == 0 || o.ProductID != e.prods[0] || o.Quantity != 3 || o.UnitPrice < 0 || o.Currency == "" {
				t.Fatalf("order %+v", o)
			}
			if e.orders(t) != 1 || e.stock(t, e.prods[0]) != 7 {
				t.Fatalf("%d orders, stock %d; want 1 and 7", e.orders(t), e.stock(t, e.prods[0]))
			}
			var src string
			e.db.Get(&src, e.db.Rebind(`SELECT utm_source FROM orders WHERE id = ?`), o.ID)
			if src != "newsletter" {
				t.Fatalf("utm_source %q not kept", src)
			}
			rows, err := e.svc.ListOrders(ctx, OrderFilter{Room: e.room})
			want := UTM{Source: "newsletter", Campaign: "bf", Content: "hero", Gclid: "Cj0KCQ-abc_123", Fbclid: "IwAR0x", Ttclid: "E.C.P.x1"}
			if err != nil || len(rows) != 1 || rows[0].UTM() != want {
				t.Fatalf("listed %+v %v, want the attribution %+v kept", rows, err, want)
			}
			p, _ := e.eng.Position(ctx, e.room, vs[0])
			st, _ := e.eng.Stats(ctx, e.room)
			if p.Status != queue.StatusNotEntered || st.Active != 0 || st.Consumed != 1 {
				t.Fatalf("after the order: %s, %d active, %d consumed", p.Status, st.Active, st.Consumed)
			}
			if _, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 1}); !errors.Is(err, ErrTokenUsed) {
				t.Fatalf("replay after consume: %v, want ErrTokenUsed", err)
			}
			// The order number buyers see is 16 random bytes, not the
			// database's sequential id.
			if len(o.PublicID) != 22 || !ValidPublicID(o.PublicID) || o.PublicID == strconv.FormatInt(o.ID, 10) {
				t.Fatalf("public order number %q (database id %d)", o.PublicID, o.ID)
			}
			if got, err := e.svc.Get(ctx, e.room, vs[0], o.PublicID); err != nil || got.ID != o.ID || got.PublicID != o.PublicID ||
				got.UnitPrice != o.UnitPrice || got.Currency != o.Currency {
				t.Fatalf("Get own order: %+v %v", got, err)
			}
			if _, err := e.svc.Get(ctx, e.room, vs[0], strconv.FormatInt(o.ID, 10)); err == nil {
				t.Fatal("the sequential database id finds the order")
			}
			other, _ := visitor.NewID()
			if _, err := e.svc.Get(ctx, e.room, other, o.PublicID); err == nil {
				t.Fatal("another visitor could read the order")
			}
		})
	}
}

// TestRollbackKeepsTheToken is the seed's case: a failing order keeps the
// token, and the retry succeeds.
func TestRollbackKeepsTheToken(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 0, 5)
	vs, toks := e.buyers(t, 1)
	ctx := context.Background()
	req := Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 1}
	steps := []struct {
		name    string
		product int64
		qty     int
		want    error
	}{
		{"no product named, two in the room", 0, 1, ErrProductRequired},
		{"unknown product", 999999, 1, ErrProductNotFound},
		{"bad quantity", e.prods[1], 0, ErrBadQuantity},
		{"sold-out product", e.prods[0], 1, ErrSoldOut},
		{"more than the stock", e.prods[1], 6, &StockError{Left: 5}},
		{"retry succeeds", e.prods[1], 2, nil},
	}
	for _, st := range steps {
		req.ProductID, req.Quantity = st.product, st.qty
		_, err := e.svc.Place(ctx, req)
		var short, want *StockError
		ok := errors.Is(err, st.want)
		if errors.As(st.want, &want) {
			ok = errors.As(err, &short) && *short == *want
		}
		if !ok {
			t.Fatalf("%s: %v, want %v", st.name, err, st.want)
		}
	}
	if e.orders(t) != 1 || e.stock(t, e.prods[1]) != 3 {
		t.Fatalf("%d orders, stock %d", e.orders(t), e.stock(t, e.prods[1]))
	}
}

func TestConcurrentPostsWithOneToken(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 1000)
	vs, toks := e.buyers(t, 1)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	start := make(chan struct{})
	for range 100 {
		wg.Go(func() {
			<-start
			_, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 1})
			key := "ok"
			switch {
			case err == nil:
			case errors.Is(err, ErrTokenInUse), errors.Is(err, ErrTokenInvalid), errors.Is(err, ErrTokenUsed):
				key = "refused"
			default:
				key = err.Error()
			}
			mu.Lock()
			outcomes[key]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	if outcomes["ok"] != 1 || outcomes["refused"] != 99 || e.orders(t) != 1 {
		t.Fatalf("outcomes %v, %d orders; want exactly one order", outcomes, e.orders(t))
	}
}

// failingConsume loses the token's consumption after the commit, as a crash
// between the two would.
type failingConsume struct{ *queue.Engine }

func (failingConsume) Consume(context.Context, string, string, string) error {
	return errors.New("simulated crash before consume")
}

func TestConsumeFailsAfterCommit(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 10)
	// The claim lasts 1 s: an attempt may take half of it, which a loaded
	// machine (the cluster drill runs this test) needs; 100 ms was missed.
	svc := NewService(NewStore(e.db.DB, 0), failingConsume{e.eng}, time.Second, quiet)
	vs, toks := e.buyers(t, 1)
	ctx := context.Background()
	req := Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 1}
	if _, err := svc.Place(ctx, req); err != nil {
		t.Fatal(err)
	}
	// The claim still stands: a replay is refused by Redis.
	if _, err := svc.Place(ctx, req); !errors.Is(err, ErrTokenInUse) {
		t.Fatalf("replay while claimed: %v, want ErrTokenInUse", err)
	}
	// The claim has expired: Redis would let it through, the database's
	// unique token hash does not.
	e.clock.Advance(1100 * time.Millisecond)
	if _, err := svc.Place(ctx, req); !errors.Is(err, ErrTokenUsed) {
		t.Fatalf("replay after the claim expired: %v, want ErrTokenUsed", err)
	}
	if e.orders(t) != 1 || e.stock(t, e.prods[0]) != 9 {
		t.Fatalf("%d orders, stock %d; want 1 and 9", e.orders(t), e.stock(t, e.prods[0]))
	}
	// The real service finishes the job (once the failed attempt's claim
	// has expired): the token is gone.
	e.clock.Advance(1100 * time.Millisecond)
	if _, err := e.svc.Place(ctx, req); !errors.Is(err, ErrTokenUsed) {
		t.Fatalf("replay through the real gate: %v", err)
	}
	if p, _ := e.eng.Position(ctx, e.room, vs[0]); p.Status != queue.StatusNotEntered {
		t.Fatalf("the used token was not consumed: %s", p.Status)
	}
}

// soldOutAtConsume records whether the room was already flagged sold out
// when the order's pass was consumed (and its slot freed).
type soldOutAtConsume struct {
	*queue.Engine
	soldOut []bool
}

func (g *soldOutAtConsume) Consume(ctx context.Context, room, visitor, holder string) error {
	st, err := g.Stats(ctx, room)
	if err != nil {
		return err
	}
	g.soldOut = append(g.soldOut, st.SoldOut)
	return g.Engine.Consume(ctx, room, visitor, holder)
}

// TestLastOrderFlagsSoldOutBeforeFreeingTheSlot: the order that takes the
// last stock flags the room sold out before its pass is consumed. The other
// way round, a tick between the two let the next buyer into a sold-out room.
func TestLastOrderFlagsSoldOutBeforeFreeingTheSlot(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 1)
	gate := &soldOutAtConsume{Engine: e.eng}
	svc := NewService(NewStore(e.db.DB, 0), gate, time.Second, quiet)
	vs, toks := e.buyers(t, 1)
	if _, err := svc.Place(context.Background(), Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 1}); err != nil {
		t.Fatal(err)
	}
	if len(gate.soldOut) != 1 || !gate.soldOut[0] {
		t.Fatalf("sold out when the last order's pass was consumed: %v; want [true]", gate.soldOut)
	}
}

// TestReplayOfALostConsume: the order committed, its consumption was lost,
// and the stock is now gone. A replay is "already used", not "sold out",
// and a retry with the same idempotency key gets its order back.
func TestReplayOfALostConsume(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 1)
	// A 1 s claim, as in TestConsumeFailsAfterCommit: 100 ms left an
	// attempt 50 ms, which a loaded machine missed.
	svc := NewService(NewStore(e.db.DB, 0), failingConsume{e.eng}, time.Second, quiet)
	vs, toks := e.buyers(t, 1)
	ctx := context.Background()
	req := Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 1, IdempotencyKey: "once"}
	first, err := svc.Place(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(1100 * time.Millisecond) // the claim expired
	again, err := svc.Place(ctx, req)
	if err != nil || again.ID != first.ID {
		t.Fatalf("retry with the same key: %+v %v; want order %d", again, err, first.ID)
	}
	e.clock.Advance(1100 * time.Millisecond)
	req.IdempotencyKey = ""
	if _, err := svc.Place(ctx, req); !errors.Is(err, ErrTokenUsed) {
		t.Fatalf("replay once sold out: %v, want ErrTokenUsed", err)
	}
	if e.orders(t) != 1 {
		t.Fatalf("%d orders", e.orders(t))
	}
}

func TestEmptyBucketReleasesTheClaim(t *testing.T) {
	e := newEnv(t, store.Postgres, func(s *room.Settings) { s.OrderRate, s.OrderBurst = 0.01, 1 }, 10)
	vs, toks := e.buyers(t, 2)
	ctx := context.Background()
	if _, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 1}); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[1], Token: toks[1], Quantity: 1})
	var rl *RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter <= 0 {
		t.Fatalf("second order: %v, want RateLimitedError with a wait", err)
	}
	if _, err := e.eng.Claim(ctx, e.room, vs[1], toks[1], time.Second); err != nil {
		t.Fatalf("the claim was not released: %v", err)
	}
	if e.orders(t) != 1 {
		t.Fatalf("%d orders", e.orders(t))
	}
}

func TestRedisDownFailsClosed(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 10)
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer dead.Close()
	svc := NewService(NewStore(e.db.DB, 0), queue.New(dead, queue.DefaultNamespace(dead)), 0, quiet)
	vs, toks := e.buyers(t, 1)
	if _, err := svc.Place(context.Background(), Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 1}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Redis down: %v, want ErrUnavailable", err)
	}
	if e.orders(t) != 0 {
		t.Fatal("an order went through without Redis")
	}
}

func TestDatabaseDownKeepsTheToken(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 10)
	down, err := store.Open(context.Background(), "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=1", 2, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	svc := NewService(NewStore(down.DB, 0), e.eng, 0, quiet)
	vs, toks := e.buyers(t, 1)
	ctx := context.Background()
	req := Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 1}
	if _, err := svc.Place(ctx, req); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("database down: %v, want ErrUnavailable", err)
	}
	if _, err := e.svc.Place(ctx, req); err != nil {
		t.Fatalf("the token did not survive the outage: %v", err)
	}
}

// TestStockRace has 20 admitted buyers race for 5 items.
func TestStockRace(t *testing.T) {
	e := newEnv(t, store.Postgres, nil, 5)
	vs, toks := e.buyers(t, 20)
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]int{}
	for i := range vs {
		wg.Go(func() {
			_, err := e.svc.Place(ctx, Request{Room: e.room, Visitor: vs[i], Token: toks[i], Quantity: 1})
			k := "ok"
			if err != nil {
				k = err.Error()
			}
			mu.Lock()
			got[k]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if got["ok"] != 5 || got[ErrSoldOut.Error()] != 15 || e.orders(t) != 5 || e.stock(t, e.prods[0]) != 0 {
		t.Fatalf("outcomes %v, %d orders, stock %d; want 5 orders, 15 sold out, stock 0", got, e.orders(t), e.stock(t, e.prods[0]))
	}
	if st, _ := e.eng.Stats(ctx, e.room); !st.SoldOut {
		t.Fatal("the room was not flagged sold out")
	}
}

func TestIdempotencyKey(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, 10)
			vs, toks := e.buyers(t, 1)
			ctx := context.Background()
			req := Request{Room: e.room, Visitor: vs[0], Token: toks[0], Quantity: 1, IdempotencyKey: "k-1"}
			first, err := e.svc.Place(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			again, err := e.svc.Place(ctx, req)
			if err != nil || again.ID != first.ID {
				t.Fatalf("retry with the same key: %+v %v; want order %d", again, err, first.ID)
			}
			if e.orders(t) != 1 {
				t.Fatalf("%d orders", e.orders(t))
			}
		})
	}
}

func TestUniqueViolationNames(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			e := newEnv(t, dialect, nil, 10)
			ins := func(hash []byte, key any) error {
				_, err := e.db.Exec(e.db.Rebind(`INSERT INTO orders (room, product_id, visitor, quantity, entry_token_hash, idempotency_key, public_id) VALUES (?, ?, ?, 1, ?, ?, ?)`),
					e.room, e.prods[0], "v", hash, key, NewPublicID())
				return err
			}
			if err := ins([]byte("a"), "k"); err != nil {
				t.Fatal(err)
			}
			tests := []struct {
				hash []byte
				key  any
				want string
			}{{[]byte("a"), nil, "token"}, {[]byte("b"), "k", "idempotency"}}
			for _, tt := range tests {
				if got := uniqueViolation(ins(tt.hash, tt.key)); got != tt.want {
					t.Errorf("violation named %q, want %q", got, tt.want)
				}
			}
			if got := uniqueViolation(errors.New("other")); got != "" {
				t.Errorf("a plain error named %q", got)
			}
		})
	}
}

func TestPublicIDs(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewPublicID()
		if len(id) != 22 || !ValidPublicID(id) || seen[id] {
			t.Fatalf("public id %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
	}
	for _, bad := range []string{"", "1", "42", "AAAAAAAAAAAAAAA", strings.Repeat("A", 65), "AAAAAAAAAAAAAAAAAAAAA/", "AAAAAAAAAAAAAAAAAAAA%2F", "AAAAAAAAAAAAAAAAAAAA.."} {
		if ValidPublicID(bad) {
			t.Errorf("ValidPublicID(%q) = true", bad)
		}
	}
	if !ValidPublicID("d1c03f9dc089282c308aeed5a5a9fcbe") {
		t.Error("an older order's hex number is refused")
	}
}
