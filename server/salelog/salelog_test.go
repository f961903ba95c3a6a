package salelog

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/token"
	"waitingroom/server/visitor"
)

// captured is a JSON slog sink whose lines tests can read.
type captured struct{ servicetest.SyncBuffer }

// lines returns the logged records with message msg about room.
func (c *captured) lines(t *testing.T, msg, room string) []map[string]any {
	t.Helper()
	text := c.String()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if rec["msg"] == msg && rec["room"] == room {
			out = append(out, rec)
		}
	}
	return out
}

func newLog(counters Counters) (*Log, *captured) {
	var c captured
	return New(counters, slog.New(slog.NewJSONHandler(&c, nil))), &c
}

// newRoom is a room on the real Redis with n visitors waiting and admit of
// them admitted.
func newRoom(t *testing.T, eng *queue.Engine, name string, n, admit int) {
	t.Helper()
	ctx := context.Background()
	s := room.Defaults(name)
	s.Rate = room.MaxRate
	if err := eng.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	eng.Admit(ctx, name, time.Second, nil) // start the rate clock
	for range n {
		v, _ := visitor.NewID()
		if _, err := eng.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	admitted := 0
	for deadline := time.Now().Add(10 * time.Second); admitted < admit; {
		// The rate's budget grows by Redis' clock: ask until it has let
		// in as many as wanted.
		toks, _ := token.NewBatch(admit - admitted)
		a, err := eng.Admit(ctx, name, time.Second, toks)
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("admit %d: %d admitted, %v", admit, admitted, err)
		}
		admitted += len(a.Visitors)
	}
}

// heldCounters reads a real room's counters, one read of every room at a
// time when the test allows it: the test knows which interval saw what.
type heldCounters struct {
	*queue.Engine
	allow chan struct{}
}

func (h heldCounters) Rooms(ctx context.Context) ([]string, error) {
	select {
	case <-h.allow:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return h.Engine.Rooms(ctx)
}

// TestSummaryEveryInterval drives the summary with ticks of its own over a
// real room: waiting, admitted/s and this instance's failures by reason.
func TestSummaryEveryInterval(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	busy, quiet := servicetest.RoomName(t, rdb), servicetest.RoomName(t, rdb)
	newRoom(t, eng, quiet, 0, 0)
	counters := heldCounters{eng, make(chan struct{})}
	l, logs := newLog(counters)
	ctx, cancel := context.WithCancel(context.Background())
	ticks := make(chan time.Time)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	done := make(chan struct{})
	go func() { l.RunTicks(ctx, start, ticks); close(done) }()
	defer func() { cancel(); <-done }()
	// step lets one read of the counters through, then ticks: the send
	// returns once that read is done and the tick's own read waits.
	step := func(n int) {
		counters.allow <- struct{}{}
		ticks <- start.Add(time.Duration(n) * time.Second)
	}
	step(1) // the baseline has no busy room
	newRoom(t, eng, busy, 10, 4)
	l.Failed(busy, "sold_out")
	l.Failed(busy, "sold_out")
	l.Failed(busy, "rate_limited")
	step(2) // summarises 0..1: the busy room's first interval
	step(3) // summarises 1..2: nothing happened

	got := logs.lines(t, "sale summary", busy)
	if len(got) != 2 {
		t.Fatalf("%d summaries of the busy room after two intervals, want 2: %v", len(got), got)
	}
	first, second := got[0], got[1]
	failures, _ := first["failures"].(map[string]any)
	if first["waiting"] != 6.0 || first["admittedPerSec"] != 4.0 || first["interval"] != "1s" || first["ordersPerSec"] != 0.0 ||
		first["failedOrders"] != 3.0 || failures["sold_out"] != 2.0 || failures["rate_limited"] != 1.0 {
		t.Fatalf("first summary %v", first)
	}
	// The next interval admitted nobody and counted no failure; the line
	// still exists, so it is summarised.
	if second["waiting"] != 6.0 || second["admittedPerSec"] != 0.0 || second["failedOrders"] != 0.0 {
		t.Fatalf("second summary %v", second)
	}
	if q := logs.lines(t, "sale summary", quiet); len(q) != 0 {
		t.Fatalf("a room without a line was summarised: %v", q)
	}
}

// fakeCounters lets a test set the counters between summaries.
type fakeCounters map[string]queue.Stats

func (f fakeCounters) Rooms(context.Context) ([]string, error) {
	var out []string
	for k := range f {
		out = append(out, k)
	}
	return out, nil
}

func (f fakeCounters) Stats(_ context.Context, room string) (queue.Stats, error) {
	st, ok := f[room]
	if !ok {
		return st, errNoRoom
	}
	return st, nil
}

var errNoRoom = fmt.Errorf("room not found")

func TestSummaryRates(t *testing.T) {
	l, logs := newLog(fakeCounters{})
	prev := map[string]queue.Stats{
		"sale":   {Waiting: 900, Admitted: 1000, Consumed: 400},
		"wiped":  {Waiting: 5, Admitted: 5000, Consumed: 4000},
		"silent": {Admitted: 7, Consumed: 7},
	}
	cur := map[string]queue.Stats{
		"sale":   {Waiting: 300, Admitted: 4000, Consumed: 2200, SoldOut: true},
		"wiped":  {Waiting: 3, Admitted: 2}, // Redis lost its data: no negative rates
		"silent": {Admitted: 7, Consumed: 7},
		"new":    {Waiting: 10, Admitted: 60},
	}
	l.summarize(prev, cur, time.Minute)
	for _, tt := range []struct {
		room                   string
		waiting, admit, orders float64
	}{{"sale", 300, 50, 30}, {"wiped", 3, 0, 0}, {"new", 10, 1, 0}} {
		got := logs.lines(t, "sale summary", tt.room)
		if len(got) != 1 || got[0]["waiting"] != tt.waiting || got[0]["admittedPerSec"] != tt.admit || got[0]["ordersPerSec"] != tt.orders {
			t.Errorf("%s: %v, want waiting %v, %v admitted/s, %v orders/s", tt.room, got, tt.waiting, tt.admit, tt.orders)
		}
	}
	if got := logs.lines(t, "sale summary", "silent"); len(got) != 0 {
		t.Errorf("a room with no line and no activity was summarised: %v", got)
	}
}

// TestGateLogsSellOutOnce: the order path marks the room sold out after
// every sold-out attempt; the log says it once, and once more when a
// restock reopens it.
func TestGateLogsSellOutOnce(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	newRoom(t, eng, name, 0, 0)
	l, logs := newLog(eng)
	g := l.WatchGate(eng)
	ctx := context.Background()
	events := func() []string {
		var out []string
		for _, rec := range logs.lines(t, "sale event", name) {
			out = append(out, rec["event"].(string))
		}
		return out
	}
	for range 3 {
		if err := g.SetSoldOut(ctx, name, true); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := eng.Stats(ctx, name); !st.SoldOut {
		t.Fatal("the gate did not pass the flag on")
	}
	g.SetSoldOut(ctx, name, false)
	g.SetSoldOut(ctx, name, false)
	// Another instance (or the admin API) sells it out; this one's next
	// call finds it already sold out.
	eng.SetSoldOut(ctx, name, true)
	l.Event(name, SoldOut, "by", "admin")
	g.SetSoldOut(ctx, name, true)
	if got, want := strings.Join(events(), ","), "sold out,reopened,sold out"; got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	if err := g.SetSoldOut(ctx, "no-such-room-"+name, true); err == nil {
		t.Fatal("an unknown room was marked")
	}
}

// TestGateLogsSellOutOnceAcrossInstances: two instances whose orders sell
// the room out at once mark it many times over; the sell-out is logged
// (and recorded) once between them, and so is the reopening.
func TestGateLogsSellOutOnceAcrossInstances(t *testing.T) {
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	newRoom(t, eng, name, 0, 0)
	a, logsA := newLog(eng)
	b, logsB := newLog(eng)
	gates := []*Gate{a.WatchGate(eng), b.WatchGate(eng)}
	ctx := context.Background()
	for _, tt := range []struct {
		soldOut bool
		want    string
	}{{true, "sold out"}, {false, "reopened"}} {
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				<-start
				if err := gates[i%2].SetSoldOut(ctx, name, tt.soldOut); err != nil {
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		var got []string
		for _, logs := range []*captured{logsA, logsB} {
			for _, rec := range logs.lines(t, "sale event", name) {
				if rec["event"] == tt.want {
					got = append(got, rec["event"].(string))
				}
			}
		}
		if len(got) != 1 {
			t.Fatalf("sold out → %v at once on two instances: %d %q events, want 1", tt.soldOut, len(got), tt.want)
		}
	}
}

func TestReason(t *testing.T) {
	for err, want := range map[error]string{
		&order.RateLimitedError{RetryAfter: time.Second}: "rate_limited",
		fmt.Errorf("x: %w", order.ErrSoldOut):            "sold_out",
		&order.StockError{Left: 2}:                       "insufficient_stock",
		&order.LimitError{Limit: 2, Left: 1}:             "over_limit",
		order.ErrTokenInvalid:                            "token_invalid",
		order.ErrTokenInUse:                              "token_in_use",
		order.ErrTokenUsed:                               "token_used",
		order.ErrTokenMissing:                            "token_missing",
		order.ErrProductNotFound:                         "bad_order",
		order.ErrBadQuantity:                             "bad_order",
		order.ErrUnavailable:                             "unavailable",
		fmt.Errorf("surprise"):                           "other",
	} {
		if got := Reason(err); got != want {
			t.Errorf("Reason(%v) = %q, want %q", err, got, want)
		}
	}
}

// TestEventsListsEveryEvent: every constant of type Event declared in the
// package is in Events (which the views' labels are checked against), and
// each names its own audit action.
func TestEventsListsEveryEvent(t *testing.T) {
	fs := gotoken.NewFileSet()
	pkgs, err := parser.ParseDir(fs, ".", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, f := range pkgs["salelog"].Files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != gotoken.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Event" {
					for _, n := range v.Names {
						declared = append(declared, n.Name)
					}
				}
			}
		}
	}
	if len(declared) < 11 {
		t.Fatalf("found only %v", declared)
	}
	if len(declared) != len(Events) {
		t.Errorf("%d Event constants declared (%v), %d in Events", len(declared), declared, len(Events))
	}
	var actions []string
	for _, ev := range Events {
		a := Action(ev)
		if slices.Contains(actions, a) {
			t.Errorf("two events are recorded as %s", a)
		}
		actions = append(actions, a)
	}
}
