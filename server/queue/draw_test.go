package queue

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"waitingroom/server/draw"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"

	"github.com/alicebob/miniredis/v2"
	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"
)

func at(d time.Duration) *time.Time { t := time.Now().Add(d).Truncate(time.Millisecond); return &t }

// prequeueRoom returns a room whose pre-queue is open (it opens in an
// hour).
func prequeueRoom(t *testing.T) (*Engine, string, redis.UniversalClient) {
	t.Helper()
	return newRoom(t, settings(func(s *room.Settings) { s.PrequeueAt, s.OpensAt = at(-time.Hour), at(time.Hour) }))
}

// openNow moves room's opening to now: the time of e's fake clock, when
// newRoom made it.
func openNow(t *testing.T, e *Engine, name string) {
	t.Helper()
	ctx := context.Background()
	s, err := e.Room(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if c, ok := clocks.Load(e); ok {
		now = c.(*clockwork.FakeClock).Now()
	}
	opens := now.Add(-time.Millisecond).Truncate(time.Millisecond)
	s.OpensAt = &opens
	if err := e.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
}

func TestOpeningWithoutPrequeue(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.OpensAt = at(-time.Second) }))
	p, err := e.Enter(ctx, name, visitors(t, 1)[0])
	if err != nil || p.Status != StatusWaiting || p.Phase != PhaseOpen || p.Rank != 0 {
		t.Fatalf("first enter after an opening with an empty pre-queue: %+v %v", p, err)
	}
}

func TestSchedulePhases(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		mut       func(*room.Settings)
		wantErr   error
		status    Status
		phase     string
		admitting bool
	}{
		{"no schedule", nil, nil, StatusWaiting, PhaseOpen, true},
		{"before the pre-queue", func(s *room.Settings) { s.PrequeueAt, s.OpensAt = at(time.Hour), at(2*time.Hour) }, ErrNotOpen, StatusNotEntered, PhaseScheduled, false},
		{"before an opening without pre-queue", func(s *room.Settings) { s.OpensAt = at(time.Hour) }, ErrNotOpen, StatusNotEntered, PhaseScheduled, false},
		{"in the pre-queue", func(s *room.Settings) { s.PrequeueAt, s.OpensAt = at(-time.Hour), at(time.Hour) }, nil, StatusPrequeued, PhasePrequeue, false},
		{"after closing", func(s *room.Settings) { s.ClosesAt = at(-time.Second) }, ErrSaleEnded, StatusNotEntered, PhaseClosed, true},
		{"mode closed", func(s *room.Settings) { s.Mode = room.ModeClosed }, ErrSaleEnded, StatusNotEntered, PhaseClosed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, name, _ := newRoom(t, settings(tt.mut))
			p, err := e.EnterFrom(ctx, name, visitors(t, 1)[0], "192.0.2.0/24", Campaign{})
			if !errors.Is(err, tt.wantErr) || p.Status != tt.status || p.Phase != tt.phase {
				t.Fatalf("enter = %+v, %v; want %s in phase %s, error %v", p, err, tt.status, tt.phase, tt.wantErr)
			}
			if p.ServerTime < time.Now().Add(-time.Minute).UnixMilli() {
				t.Errorf("serverTime %d is not now", p.ServerTime)
			}
			if tt.status == StatusPrequeued && (p.Ticket != 1 || p.Rank != 0 || p.OpensAt == nil || p.PrequeueAt == nil) {
				t.Errorf("pre-queued position %+v: want ticket 1, no rank, the schedule", p)
			}
			// A visitor already in line stays there; admission runs only
			// when the phase lets it.
			k := testKeys(e.rdb, name)
			e.rdb.ZAdd(ctx, k.key("queue"), redis.Z{Score: 1000, Member: "x"})
			wakeRoom(t, e, name)                          // as a join would
			clockOf(t, e).Advance(100 * time.Millisecond) // credit for one admission
			a, err := e.Admit(ctx, name, time.Second, []string{"tok"})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(a.Visitors) > 0; got != tt.admitting {
				t.Errorf("admitted %v, want admitting %v", a.Visitors, tt.admitting)
			}
		})
	}
}

// TestClosedSoldOutRoomSaysEnded: after closing, a new visitor of a room
// that also sold out is told the sale has ended (new buyers can no longer
// join, restock or not); before the closing they are told it sold out.
func TestClosedSoldOutRoomSaysEnded(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		closes  time.Duration
		wantErr error
	}{
		{"open", time.Hour, nil},
		{"closed", -time.Second, ErrSaleEnded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.ClosesAt = at(tt.closes) }))
			if err := e.SetSoldOut(ctx, name, true); err != nil {
				t.Fatal(err)
			}
			p, err := e.Enter(ctx, name, visitors(t, 1)[0])
			if !errors.Is(err, tt.wantErr) || !p.SoldOut {
				t.Fatalf("enter into a sold-out room = %+v, %v; want error %v", p, err, tt.wantErr)
			}
		})
	}
}

func TestScheduleServeLineAfterClose(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.ClosesAt = at(-time.Second); s.ServeLineAfterClose = false }))
	e.rdb.ZAdd(ctx, testKeys(e.rdb, name).key("queue"), redis.Z{Score: 1, Member: "x"})
	clockOf(t, e).Advance(100 * time.Millisecond) // credit for one admission
	if a, err := e.Admit(ctx, name, time.Second, []string{"tok"}); err != nil || len(a.Visitors) != 0 {
		t.Fatalf("admitted %+v (%v) after closing with serveLineAfterClose false", a, err)
	}
}

func TestPrequeueNetworks(t *testing.T) {
	ctx := context.Background()
	e, name, _ := prequeueRoom(t)
	for i, v := range visitors(t, 5) {
		net := "192.0.2.0/24"
		if i == 4 {
			net = "2001:db8::/64"
		}
		if _, err := e.EnterFrom(ctx, name, v, net, Campaign{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.EnterFrom(ctx, name, v, net, Campaign{}); err != nil { // idempotent: counted once
			t.Fatal(err)
		}
	}
	nets, err := e.Networks(ctx, name, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []NetworkCount{{"192.0.2.0/24", 4}, {"2001:db8::/64", 1}}
	if !slices.Equal(nets, want) {
		t.Fatalf("networks = %v, want %v", nets, want)
	}
}

// drawnOrder returns the pre-queue's visitors in the order the room's seed
// draws them, read before the draw.
func drawnOrder(t *testing.T, e *Engine, name string) ([]string, []int64, []byte) {
	t.Helper()
	ctx := context.Background()
	k := testKeys(e.rdb, name)
	seedHex, err := e.rdb.HGet(ctx, k.key("draw"), "seed").Result()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := hex.DecodeString(seedHex)
	zs, err := e.rdb.ZRangeWithScores(ctx, k.key("prequeue"), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	tickets := make([]int64, len(zs))
	for i, z := range zs {
		tickets[i] = int64(z.Score)
	}
	vs := make([]string, len(zs))
	ts := make([]int64, len(zs))
	for i, j := range draw.Order(seed, tickets) {
		vs[i], ts[i] = zs[j].Member.(string), tickets[j]
	}
	return vs, ts, seed
}

func TestDrawOrdersTheLine(t *testing.T) {
	ctx := context.Background()
	e, name, _ := prequeueRoom(t)
	before, err := e.DrawInfo(ctx, name)
	if err != nil || len(before.Commitment) != 64 || before.Seed != "" || before.Done {
		t.Fatalf("before the draw: %+v %v; want the commitment alone", before, err)
	}
	vs := visitors(t, 40)
	for _, v := range vs {
		if p, err := e.Enter(ctx, name, v); err != nil || p.Status != StatusPrequeued {
			t.Fatalf("enter: %+v %v", p, err)
		}
	}
	leaver := vs[7]
	if ok, err := e.Leave(ctx, name, leaver); err != nil || !ok {
		t.Fatalf("leave the pre-queue: %v %v", ok, err)
	}
	order, tickets, seed := drawnOrder(t, e, name)
	conserved(t, e, name)
	openNow(t, e, name)
	// Opening freezes the pre-queue; a late joiner goes behind the block,
	// and nobody is admitted until the draw is done.
	late := visitors(t, 1)[0]
	p, err := e.Enter(ctx, name, late)
	if err != nil || p.Status != StatusWaiting || p.Rank != int64(len(order)) {
		t.Fatalf("late joiner: %+v %v; want WAITING behind %d", p, err, len(order))
	}
	if a, err := e.Admit(ctx, name, time.Second, []string{"a", "b"}); err != nil || len(a.Visitors) != 0 || a.Phase != "drawing" {
		t.Fatalf("admitted %+v %v before the draw", a, err)
	}
	if p, _ := e.Position(ctx, name, order[0]); p.Status != StatusPrequeued || p.Phase != PhasePrequeue {
		t.Fatalf("before the draw: %+v", p)
	}
	// Two drawn buyers leave mid-draw, one already written into the line
	// and one not yet: their places depart. The first chunk goes by
	// draw_chunk.lua, the second as a fenced transaction; the withdrawal
	// turns the rest back to draw_chunk.lua, which departs the place.
	gone, written := order[25], order[5]
	var how []bool
	st, err := e.Draw(ctx, name, DrawOptions{Chunk: 10, Depth: 1, afterChunk: func(w int, fenced bool) {
		how = append(how, fenced)
		if w == 20 {
			for _, v := range []string{gone, written} {
				if ok, err := e.Leave(ctx, name, v); err != nil || !ok {
					t.Errorf("leave during the draw: %v %v", ok, err)
				}
			}
		}
	}})
	if err != nil || st != DrawDone {
		t.Fatalf("draw: %v %v", st, err)
	}
	if want := []bool{false, true, false, false}; !slices.Equal(how, want) {
		t.Errorf("chunks fenced %v, want %v", how, want)
	}
	info, err := e.DrawInfo(ctx, name)
	if err != nil || !info.Done || info.Seed != hex.EncodeToString(seed) || !slices.Equal(info.Tickets, tickets) {
		t.Fatalf("draw info %+v %v; want tickets %v", info, err, tickets)
	}
	if err := draw.Verify(info.Commitment, info.Seed, info.Tickets); err != nil {
		t.Fatal(err)
	}
	// Drawn buyers count as seen at the draw, so that one gone for good is
	// abandoned in time rather than waste an admission.
	k := testKeys(e.rdb, name)
	base, _ := e.rdb.Get(ctx, k.key("seenbase")).Int64()
	zs, _ := e.rdb.ZRangeWithScores(ctx, k.key("queue"), 0, -1).Result()
	for _, z := range zs {
		off := 2 * (int64(z.Score) - base)
		if cell, _ := e.rdb.GetRange(ctx, k.key("seen"), off, off+1).Result(); len(cell) != 2 || cell == "\x00\x00" {
			t.Errorf("drawn buyer %v at line %v: liveness cell %q, want the draw's epoch", z.Member, z.Score, cell)
		}
	}
	snap, err := e.Snapshot(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	var rank int64
	for i, v := range order {
		p, err := e.Position(ctx, name, v)
		if err != nil {
			t.Fatal(err)
		}
		if v == gone || v == written {
			if p.Status != StatusNotEntered {
				t.Errorf("the buyer who left mid-draw: %+v", p)
			}
			continue
		}
		if p.Status != StatusWaiting || p.Rank != rank || p.Ticket != tickets[i] || p.Phase != PhaseOpen {
			t.Fatalf("place %d: %+v; want WAITING rank %d ticket %d", i, p, rank, tickets[i])
		}
		// The hub's arithmetic agrees.
		below := 0
		for _, d := range snap.Departed {
			if d < p.Line {
				below++
			}
		}
		if hub := p.Line - snap.Head - 1 - int64(below); hub != rank {
			t.Fatalf("place %d: the hub's rank is %d, want %d", i, hub, rank)
		}
		rank++
	}
	if p, _ := e.Position(ctx, name, late); p.Rank != rank {
		t.Errorf("late joiner after the draw: rank %d, want %d", p.Rank, rank)
	}
	if p, _ := e.Position(ctx, name, leaver); p.Status != StatusNotEntered {
		t.Errorf("the buyer who left the pre-queue: %+v", p)
	}
	// Admission follows the drawn order.
	var admitted []string
	for len(admitted) < len(order)-2 {
		clockOf(t, e).Advance(200 * time.Millisecond)
		a, err := e.Admit(ctx, name, time.Second, make([]string, 60))
		if err != nil {
			t.Fatal(err)
		}
		admitted = append(admitted, a.Visitors...)
	}
	conserved(t, e, name)
	want := slices.DeleteFunc(slices.Clone(order), func(v string) bool { return v == gone || v == written })
	if !slices.Equal(admitted[:len(want)], want) {
		t.Fatalf("admitted %v, want the drawn order %v", admitted, want)
	}
}

// fillPrequeue puts n entries in room's pre-queue directly, with tickets
// 1..n: the scripts' own enter would take minutes for a million.
func fillPrequeue(tb testing.TB, rdb redis.UniversalClient, name string, n int) {
	tb.Helper()
	fillZSet(tb, rdb, roomKeys(DefaultNamespace(rdb), name).key("prequeue"), n)
	if err := rdb.Set(context.Background(), roomKeys(DefaultNamespace(rdb), name).key("seq"), n, 0).Err(); err != nil {
		tb.Fatal(err)
	}
}

// fillZSet adds n members (v000…001 at 1 to n) to the sorted set key, in
// pipelines of 10,000-member ZADDs: the reference load of a draw.
func fillZSet(tb testing.TB, rdb redis.UniversalClient, key string, n int) {
	tb.Helper()
	ctx := context.Background()
	const batch, depth = 10000, 10
	pipe := rdb.Pipeline()
	for lo := 0; lo < n; lo += batch {
		zs := make([]redis.Z, 0, batch)
		for i := lo; i < min(lo+batch, n); i++ {
			zs = append(zs, redis.Z{Score: float64(i + 1), Member: fmt.Sprintf("v%021d", i+1)})
		}
		pipe.ZAdd(ctx, key, zs...)
		if pipe.Len() == depth || lo+batch >= n {
			if _, err := pipe.Exec(ctx); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// checkDrawn checks that room's line holds the n pre-queued entries, once
// each, at line numbers base+1..base+n in the order the seed draws.
func checkDrawn(t *testing.T, e *Engine, name string, n int, order []string) {
	t.Helper()
	ctx := context.Background()
	k := testKeys(e.rdb, name)
	zs, err := e.rdb.ZRangeWithScores(ctx, k.key("queue"), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(zs) != n {
		t.Fatalf("the line holds %d, want %d", len(zs), n)
	}
	base, _ := e.rdb.HGet(ctx, k.key("draw"), "base").Int()
	for i, z := range zs {
		if int(z.Score) != base+i+1 || z.Member != order[i] {
			t.Fatalf("line number %d: %v at %v, want %s", base+i+1, z.Member, z.Score, order[i])
		}
	}
	info, err := e.DrawInfo(ctx, name)
	if err != nil || !info.Done || len(info.Tickets) != n {
		t.Fatalf("draw info: done %v, %d tickets, %v", info.Done, len(info.Tickets), err)
	}
	if err := draw.Verify(info.Commitment, info.Seed, info.Tickets); err != nil {
		t.Fatal(err)
	}
}

func TestDrawRace(t *testing.T) {
	ctx := context.Background()
	_, name, rdb := prequeueRoom(t)
	const n = 5000
	fillPrequeue(t, rdb, name, n)
	e0 := New(rdb, DefaultNamespace(rdb))
	order, _, _ := drawnOrder(t, e0, name)
	openNow(t, e0, name)
	var wg sync.WaitGroup
	var mu sync.Mutex
	drew := 0
	for i := range 3 {
		e := New(rdb, DefaultNamespace(rdb))
		wg.Go(func() {
			for {
				st, err := e.Draw(ctx, name, DrawOptions{Owner: "instance-" + strconv.Itoa(i), Chunk: 100})
				if errors.Is(err, ErrDrawBusy) {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				if err != nil {
					t.Error(err)
				}
				if st == DrawDone {
					mu.Lock()
					drew++
					mu.Unlock()
				}
				return
			}
		})
	}
	wg.Wait()
	if drew != 3 {
		t.Errorf("%d instances saw the draw done, want 3", drew)
	}
	checkDrawn(t, e0, name, n, order)
}

// TestDrawChild is the child process of TestDrawKilled: it draws slowly
// until killed.
func TestDrawChild(t *testing.T) {
	name := os.Getenv("WR_DRAW_CHILD")
	if name == "" {
		t.Skip("run by TestDrawKilled")
	}
	rdb := servicetest.Redis(t)
	e := New(rdb, DefaultNamespace(rdb))
	_, err := e.Draw(context.Background(), name, DrawOptions{Owner: "child", Chunk: 100, Lease: time.Second,
		afterChunk: func(int, bool) { time.Sleep(20 * time.Millisecond) }})
	t.Fatalf("the child finished its draw (%v); it should have been killed", err)
}

func TestDrawKilled(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := prequeueRoom(t)
	const n = 5000
	fillPrequeue(t, rdb, name, n)
	order, _, _ := drawnOrder(t, e, name)
	openNow(t, e, name)
	cmd := exec.Command(os.Args[0], "-test.run=^TestDrawChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WR_DRAW_CHILD="+name)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	k := testKeys(rdb, name)
	deadline := time.Now().Add(30 * time.Second)
	for {
		w, _ := rdb.HGet(ctx, k.key("draw"), "written").Int()
		if w >= 1000 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child wrote nothing")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	w, _ := rdb.HGet(ctx, k.key("draw"), "written").Int()
	if w >= n {
		t.Fatalf("the child finished (%d written) before the kill", w)
	}
	// The dead child's lease holds the draw until it runs out.
	if _, err := e.Draw(ctx, name, DrawOptions{Owner: "survivor"}); !errors.Is(err, ErrDrawBusy) {
		t.Fatalf("draw under the dead child's lease: %v, want ErrDrawBusy", err)
	}
	for {
		st, err := e.Draw(ctx, name, DrawOptions{Owner: "survivor", Chunk: 100})
		if errors.Is(err, ErrDrawBusy) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err != nil || st != DrawDone {
			t.Fatalf("survivor: %v %v", st, err)
		}
		break
	}
	checkDrawn(t, e, name, n, order)
}

// TestDrawWritesInChunks draws a pre-queue and checks the size of every
// script call that writes places: at most the chunk (1000 by default), so
// that no Redis call of a draw grows with the crowd. How long a chunk takes
// on a quiet Redis is measured by BenchmarkDraw1M (BENCHMARKS.md), not
// asserted here.
func TestDrawWritesInChunks(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		n, chunk  int
		wantCalls int
	}{
		{"default chunk", 5200, 0, 6},
		{"small chunk", 1000, 100, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, name, rdb := prequeueRoom(t)
			fillPrequeue(t, rdb, name, tc.n)
			openNow(t, e, name)
			var sizes []int
			last := 0
			st, err := e.Draw(ctx, name, DrawOptions{Lease: time.Minute, Chunk: tc.chunk, afterChunk: func(w int, _ bool) {
				sizes = append(sizes, w-last)
				last = w
			}})
			if err != nil || st != DrawDone {
				t.Fatalf("draw: %v %v", st, err)
			}
			limit := tc.chunk
			if limit == 0 {
				limit = 1000
			}
			total := 0
			for _, n := range sizes {
				if n > limit {
					t.Errorf("a call wrote %d places, over the chunk of %d", n, limit)
				}
				total += n
			}
			if len(sizes) != tc.wantCalls || total != tc.n {
				t.Fatalf("%d calls wrote %d places, want %d calls writing %d", len(sizes), total, tc.wantCalls, tc.n)
			}
		})
	}
}

// conserved checks that every ticket issued is counted once.
func conserved(t *testing.T, e *Engine, name string) {
	t.Helper()
	st, err := e.Stats(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Unaccounted() != 0 {
		t.Fatalf("issued %d != prequeued %d + waiting %d + admitted %d + left %d", st.Issued, st.Prequeued, st.Waiting, st.Admitted, st.Left)
	}
}

// seededRoom saves a room in its pre-queue (it opens in an hour) with an
// engine that derives its draw's seed from secret, and fills its
// pre-queue with n entries.
func seededRoom(t *testing.T, n int, secret string) (*Engine, string, redis.UniversalClient) {
	t.Helper()
	rdb := servicetest.Redis(t)
	name := servicetest.RoomName(t, rdb)
	e := seededEngine(t, rdb, secret)
	if err := e.SaveRoom(context.Background(), name, settings(func(s *room.Settings) { s.PrequeueAt, s.OpensAt = at(-time.Hour), at(time.Hour) })); err != nil {
		t.Fatal(err)
	}
	fillPrequeue(t, rdb, name, n)
	return e, name, rdb
}

// seededEngine is another instance on rdb, its seeds derived from secret
// and the previous secrets.
func seededEngine(t *testing.T, rdb redis.UniversalClient, secret string, previous ...string) *Engine {
	t.Helper()
	var prev [][]byte
	for _, p := range previous {
		prev = append(prev, []byte(p))
	}
	s, err := draw.NewSeeder(DefaultNamespace(rdb), []byte(secret), prev...)
	if err != nil {
		t.Fatal(err)
	}
	e := New(rdb, DefaultNamespace(rdb))
	e.SetDrawSeeder(s)
	return e
}

// roomDump returns every value of room's keys (hash fields and zset
// members included), as a Redis reader sees them.
func roomDump(t *testing.T, rdb redis.UniversalClient, name string) []string {
	t.Helper()
	ctx := context.Background()
	// On a Cluster the room's keys are all on the master that owns its
	// hash tag; KEYS asks one node, so every master is asked.
	var keys []string
	var err error
	if c, ok := rdb.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		err = c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			ks, err := m.Keys(ctx, "*{"+name+"}*").Result()
			mu.Lock()
			keys = append(keys, ks...)
			mu.Unlock()
			return err
		})
	} else {
		keys, err = rdb.Keys(ctx, "*{"+name+"}*").Result()
	}
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys of room %s: %v, %v", name, keys, err)
	}
	var vals []string
	for _, k := range keys {
		vals = append(vals, k)
		switch typ := rdb.Type(ctx, k).Val(); typ {
		case "string":
			vals = append(vals, rdb.Get(ctx, k).Val())
		case "hash":
			for f, v := range rdb.HGetAll(ctx, k).Val() {
				vals = append(vals, f, v)
			}
		case "zset":
			for _, z := range rdb.ZRangeWithScores(ctx, k, 0, -1).Val() {
				vals = append(vals, z.Member.(string), strconv.FormatFloat(z.Score, 'f', -1, 64))
			}
		case "set":
			vals = append(vals, rdb.SMembers(ctx, k).Val()...)
		case "list":
			vals = append(vals, rdb.LRange(ctx, k, 0, -1).Val()...)
		default:
			t.Fatalf("key %s of type %s is not read", k, typ)
		}
	}
	return vals
}

// TestDrawSeedHiddenFromRedis: before the reveal, nothing in Redis is the
// seed or a preimage of the commitment; the draw that follows is the
// seed's, verifiable, and the same whichever instance with the secret
// draws.
func TestDrawSeedHiddenFromRedis(t *testing.T) {
	ctx := context.Background()
	const secret = "the deployment's secret 0123456789"
	e, name, rdb := seededRoom(t, 300, secret)
	info, err := e.DrawInfo(ctx, name)
	if err != nil || len(info.Commitment) != 64 {
		t.Fatalf("draw info: %+v %v", info, err)
	}
	nonce, _ := hex.DecodeString(rdb.HGet(ctx, testKeys(rdb, name).key("draw"), "nonce").Val())
	seed, err := e.seeder.Committed(name, nonce, info.Commitment)
	if err != nil {
		t.Fatal(err)
	}
	forms := []string{string(seed), hex.EncodeToString(seed), strings.ToUpper(hex.EncodeToString(seed)),
		base64.StdEncoding.EncodeToString(seed), base64.RawURLEncoding.EncodeToString(seed)}
	for _, v := range roomDump(t, rdb, name) {
		for _, f := range forms {
			if strings.Contains(v, f) {
				t.Fatalf("Redis holds the seed before the reveal: %q", v)
			}
		}
		raw, _ := hex.DecodeString(v)
		if draw.Commitment([]byte(v)) == info.Commitment || draw.Commitment(raw) == info.Commitment {
			t.Fatalf("Redis holds a preimage of the commitment: %q", v)
		}
	}

	// The seed as the secret derives it orders the line.
	zs := rdb.ZRangeWithScores(ctx, testKeys(rdb, name).key("prequeue"), 0, -1).Val()
	tickets := make([]int64, len(zs))
	for i, z := range zs {
		tickets[i] = int64(z.Score)
	}
	order := make([]string, len(zs))
	for i, j := range draw.Order(seed, tickets) {
		order[i] = zs[j].Member.(string)
	}
	openNow(t, e, name)
	other := seededEngine(t, rdb, secret) // another instance draws
	if st, err := other.Draw(ctx, name, DrawOptions{Chunk: 70}); err != nil || st != DrawDone {
		t.Fatalf("draw: %v %v", st, err)
	}
	checkDrawn(t, e, name, len(zs), order)
	if after, _ := e.DrawInfo(ctx, name); after.Seed != hex.EncodeToString(seed) || after.Commitment != info.Commitment {
		t.Fatalf("revealed %+v, want the seed %x of commitment %s", after, seed, info.Commitment)
	}
}

// TestDrawAfterSecretRotation: a draw committed under the previous secret
// is drawn with the seed it committed to by an instance that knows that
// secret, and never with another seed by one that does not.
func TestDrawAfterSecretRotation(t *testing.T) {
	ctx := context.Background()
	const oldSecret, newSecret = "the old secret 0123456789", "the new secret 0123456789"
	e, name, rdb := seededRoom(t, 50, oldSecret)
	info, _ := e.DrawInfo(ctx, name)
	openNow(t, e, name)

	rotated := seededEngine(t, rdb, newSecret)
	if _, err := rotated.Draw(ctx, name, DrawOptions{Owner: "instance"}); !errors.Is(err, draw.ErrNoSecret) {
		t.Fatalf("draw without the committed secret: %v, want ErrNoSecret", err)
	}
	if got, _ := rotated.DrawInfo(ctx, name); got.Done || got.Seed != "" || got.Commitment != info.Commitment {
		t.Fatalf("after the refused draw: %+v", got)
	}
	// The refused instance gave the lease up: another one, with the
	// previous secret kept, draws at once.
	both := seededEngine(t, rdb, newSecret, oldSecret)
	if st, err := both.Draw(ctx, name, DrawOptions{Owner: "another"}); err != nil || st != DrawDone {
		t.Fatalf("draw with the previous secret: %v %v", st, err)
	}
	got, err := both.DrawInfo(ctx, name)
	if err != nil || got.Commitment != info.Commitment || len(got.Tickets) != 50 {
		t.Fatalf("after the draw: %+v %v", got, err)
	}
	if err := draw.Verify(got.Commitment, got.Seed, got.Tickets); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkDraw1M draws a pre-queue of 1,000,000 buyers on real Redis and
// reports the draw's wall time beside the reference of the same run: the
// pipelined load of the same million into a sorted set of its own. It
// reports the draw's longest single Redis call as Redis timed it (SLOWLOG,
// set for the draw to log every call of 1 ms or more: 0 means none took
// 1 ms), the number of its calls over 10 ms, and the slowest round trip as
// the client saw it:
//
//	go test ./server/queue -run '^$' -bench BenchmarkDraw1M -benchtime 1x
func BenchmarkDraw1M(b *testing.B) {
	const n = 1000000
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		rdb := servicetest.Redis(b)
		name := servicetest.RoomName(b, rdb)
		hook := &maxLatency{}
		e := New(rdb, DefaultNamespace(rdb))
		s := room.Defaults(name)
		s.PrequeueAt, s.OpensAt = at(-time.Hour), at(time.Hour)
		if err := e.SaveRoom(ctx, name, s); err != nil {
			b.Fatal(err)
		}
		ref := DefaultNamespace(rdb) + ":{" + name + "}:loadref"
		loadStart := time.Now()
		fillZSet(b, rdb, ref, n)
		load := time.Since(loadStart)
		rdb.Unlink(ctx, ref)
		fillPrequeue(b, rdb, name, n)
		s.OpensAt = at(-time.Millisecond)
		if err := e.SaveRoom(ctx, name, s); err != nil {
			b.Fatal(err)
		}
		const logLen = 10000
		slowlogFrom(b, rdb, time.Millisecond, logLen)
		if c, ok := rdb.(*redis.Client); ok {
			c.AddHook(hook)
		}
		b.StartTimer()
		start := time.Now()
		st, err := e.Draw(ctx, name, DrawOptions{})
		took := time.Since(start)
		b.StopTimer()
		if err != nil || st != DrawDone {
			b.Fatalf("draw: %v %v", st, err)
		}
		slowest, over := reportSlowlog(b, rdb, name, logLen, 10*time.Millisecond)
		b.ReportMetric(took.Seconds(), "s/draw")
		b.ReportMetric(load.Seconds(), "s/pipelined-load")
		b.ReportMetric(took.Seconds()/load.Seconds(), "draw/load")
		b.ReportMetric(float64(slowest.Microseconds())/1000, "ms-slowest-redis-call")
		b.ReportMetric(float64(over), "calls-over-10ms")
		b.ReportMetric(float64(hook.max.Load())/1e6, "ms-slowest-round-trip")
		servicetest.DropRoom(rdb, name)
	}
}

// reportSlowlog logs room name's SLOWLOG entries and returns the longest
// and the number over limit.
func reportSlowlog(tb testing.TB, rdb redis.UniversalClient, name string, logLen int, limit time.Duration) (slowest time.Duration, over int) {
	tb.Helper()
	logged := roomSlowlog(tb, rdb, name, logLen)
	for _, l := range logged {
		if l.Duration > slowest {
			slowest = l.Duration
			tb.Logf("slowest so far: %v %.120s", l.Duration, strings.Join(l.Args, " "))
		}
		if l.Duration > limit {
			over++
		}
	}
	tb.Logf("%d calls took 1 ms or more", len(logged))
	return slowest, over
}

// BenchmarkDeleteRoom1M deletes a room whose line holds 1,000,000 buyers
// (with their liveness cells) on real Redis, and reports the delete's wall
// time and its longest Redis call (SLOWLOG from 1 ms), beside the
// pipelined load of the same line in the same run:
//
//	go test ./server/queue -run '^$' -bench BenchmarkDeleteRoom1M -benchtime 1x
func BenchmarkDeleteRoom1M(b *testing.B) {
	const n = 1000000
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		rdb := servicetest.Redis(b)
		name := servicetest.RoomName(b, rdb)
		e := New(rdb, DefaultNamespace(rdb))
		s := room.Defaults(name)
		s.Rate = room.MinRate
		if err := e.SaveRoom(ctx, name, s); err != nil {
			b.Fatal(err)
		}
		k := roomKeys(DefaultNamespace(rdb), name)
		loadStart := time.Now()
		fillZSet(b, rdb, k.key("queue"), n)
		load := time.Since(loadStart)
		if err := rdb.SetRange(ctx, k.key("seen"), 2*n, "\x00\x01").Err(); err != nil {
			b.Fatal(err)
		}
		const logLen = 1000
		slowlogFrom(b, rdb, time.Millisecond, logLen)
		b.StartTimer()
		start := time.Now()
		d, err := e.DeleteRoom(ctx, name)
		took := time.Since(start)
		b.StopTimer()
		if err != nil || !d.Existed {
			b.Fatalf("delete: %+v %v", d, err)
		}
		slowest, over := reportSlowlog(b, rdb, name, logLen, 10*time.Millisecond)
		b.ReportMetric(took.Seconds()*1000, "ms/delete")
		b.ReportMetric(load.Seconds(), "s/pipelined-load")
		b.ReportMetric(float64(slowest.Microseconds())/1000, "ms-slowest-redis-call")
		b.ReportMetric(float64(over), "calls-over-10ms")
	}
}

// maxLatency records the longest command round trip seen by the client,
// Go's side included: an upper bound of the time Redis spent on it.
type maxLatency struct{ max atomic.Int64 }

func (h *maxLatency) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *maxLatency) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		d := int64(time.Since(start))
		for {
			cur := h.max.Load()
			if d <= cur || h.max.CompareAndSwap(cur, d) {
				return err
			}
		}
	}
}

func (h *maxLatency) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestDrawOnTheEmbeddedRedis runs a pre-queue, its draw and the drawn
// buyers' positions on the embedded Redis of `make run` (which has no Lua
// struct library) as on the real one, with and without campaigns.
func TestDrawOnTheEmbeddedRedis(t *testing.T) {
	mini := miniredis.RunT(t)
	for _, tc := range []struct {
		name     string
		rdb      redis.UniversalClient
		campaign Campaign
	}{
		{"embedded, direct", redis.NewClient(&redis.Options{Addr: mini.Addr()}), Campaign{}},
		{"embedded, campaign", redis.NewClient(&redis.Options{Addr: mini.Addr()}), Campaign{Source: "kakao", Medium: "social", Campaign: "launch"}},
		{"redis, campaign", servicetest.Redis(t), Campaign{Source: "kakao", Medium: "social", Campaign: "launch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := New(tc.rdb, DefaultNamespace(tc.rdb))
			name := servicetest.RoomName(t, tc.rdb)
			set := room.Defaults(name)
			set.Rate = room.MinRate // the drawn stay in line, so their positions are read
			set.PrequeueAt, set.OpensAt = at(-time.Hour), at(time.Hour)
			if err := e.SaveRoom(ctx, name, set); err != nil {
				t.Fatal(err)
			}
			vs := visitors(t, 20)
			for _, v := range vs {
				if p, err := e.EnterFrom(ctx, name, v, "", tc.campaign); err != nil || p.Status != StatusPrequeued {
					t.Fatalf("join the pre-queue: %+v %v", p, err)
				}
			}
			openNow(t, e, name)
			if st, err := e.Draw(ctx, name, DrawOptions{}); err != nil || st != DrawDone {
				t.Fatalf("draw: %v %v", st, err)
			}
			seen := map[int64]bool{}
			for _, v := range vs {
				p, err := e.Position(ctx, name, v)
				if err != nil || p.Status != StatusWaiting {
					t.Fatalf("a drawn buyer's position: %+v %v", p, err)
				}
				if p.Ticket < 1 || p.Ticket > int64(len(vs)) || seen[p.Ticket] {
					t.Fatalf("a drawn buyer shows pre-queue ticket %d (seen %v)", p.Ticket, seen)
				}
				seen[p.Ticket] = true
			}
			counts, err := e.Attribution(ctx, name)
			if err != nil || len(counts) != 1 || counts[0].Campaign != tc.campaign || counts[0].Joined != int64(len(vs)) {
				t.Fatalf("attribution after the draw: %+v %v", counts, err)
			}
		})
	}
}

// drawBegun returns a room past its opening whose pre-queue of n is
// frozen for its draw, with the draw's lease held by "me".
func drawBegun(t *testing.T, n int) (*Engine, string, redis.UniversalClient) {
	t.Helper()
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.PrequeueAt, s.OpensAt = at(-time.Hour), at(time.Hour) }))
	fillPrequeue(t, rdb, name, n)
	if err := e.SaveRoom(ctx, name, settings(func(s *room.Settings) { s.PrequeueAt, s.OpensAt = at(-time.Hour), at(-time.Millisecond) })); err != nil {
		t.Fatal(err)
	}
	clockOf(t, e).Advance(time.Second) // past the opening
	if res, err := e.run(ctx, e.s.drawBegin, name, "me", 5000).Slice(); err != nil || asInt(res[0]) != 2 {
		t.Fatalf("draw begin: %v %v", res, err)
	}
	return e, name, rdb
}

// TestDrawChunkPastTheWrittenIsRefused: a chunk that starts past the
// places written (one before it failed in the same round trip) writes
// nothing and says so; the draw's progress stays contiguous.
func TestDrawChunkPastTheWrittenIsRefused(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := drawBegun(t, 10)
	base, _ := rdb.HGet(ctx, testKeys(rdb, name).key("draw"), "base").Int()
	chunk := func(start int, vs ...string) int64 {
		packed := make([]byte, 4*len(vs))
		args := []any{"me", 5000, start, string(packed)}
		for i, v := range vs {
			args = append(args, base+start+i+1, v)
		}
		w, err := e.run(ctx, e.s.drawChunk, name, args...).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	if w := chunk(5, "v6", "v7"); w != -2 {
		t.Fatalf("a chunk at 5 with none written: %d, want -2", w)
	}
	if n, _ := rdb.ZCard(ctx, testKeys(rdb, name).key("queue")).Result(); n != 0 {
		t.Fatalf("the refused chunk wrote %d places", n)
	}
	if w := chunk(0, "v1", "v2"); w != 2 {
		t.Fatalf("the first chunk: %d, want 2 written", w)
	}
	if w := chunk(2, "v3"); w != 3 {
		t.Fatalf("the next chunk: %d, want 3 written", w)
	}
}

// TestDrawChunkChecksItsPlaces: a chunk whose line numbers are not those
// of its places, or whose tickets do not match its visitors, is refused
// whole; a chunk that is right sizes the drawn list and the liveness cells
// to the whole draw at once, zero-filled.
func TestDrawChunkChecksItsPlaces(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := drawBegun(t, 10)
	k := testKeys(rdb, name)
	base, _ := rdb.HGet(ctx, k.key("draw"), "base").Int()
	for _, tc := range []struct {
		name  string
		lines []int // line numbers of v1, v2, v3
		tail  []any // arguments after the pairs
		tix   int   // tickets packed
	}{
		{"first line off", []int{base + 2, base + 2, base + 3}, nil, 3},
		{"last line off", []int{base + 1, base + 2, base + 4}, nil, 3},
		{"a line number without its visitor", []int{base + 1, base + 2, base + 3}, []any{base + 4}, 3},
		{"tickets short", []int{base + 1, base + 2, base + 3}, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []any{"me", 5000, 0, string(make([]byte, 4*tc.tix))}
			for i, l := range tc.lines {
				args = append(args, l, fmt.Sprintf("v%d", i+1))
			}
			args = append(args, tc.tail...)
			if err := e.run(ctx, e.s.drawChunk, name, args...).Err(); err == nil || !strings.Contains(err.Error(), "line numbers") {
				t.Fatalf("chunk: %v, want a refusal", err)
			}
			if n, _ := rdb.ZCard(ctx, k.key("queue")).Result(); n != 0 {
				t.Fatalf("the refused chunk wrote %d places", n)
			}
			if w, _ := rdb.HGet(ctx, k.key("draw"), "written").Int(); w != 0 {
				t.Fatalf("the refused chunk recorded %d written", w)
			}
		})
	}
	args := []any{"me", 5000, 0, "\x00\x00\x00\x07\x00\x00\x00\x03"}
	args = append(args, base+1, "v7", base+2, "v3")
	if w, err := e.run(ctx, e.s.drawChunk, name, args...).Int64(); err != nil || w != 2 {
		t.Fatalf("a right chunk: %d %v, want 2 written", w, err)
	}
	drawn, _ := rdb.Get(ctx, k.key("drawn")).Result()
	if drawn != "\x00\x00\x00\x07\x00\x00\x00\x03"+strings.Repeat("\x00", 32) {
		t.Fatalf("drawn list %q, want the two tickets and 8 places of zeros", drawn)
	}
	sbase, _ := rdb.Get(ctx, k.key("seenbase")).Int()
	seen, _ := rdb.Get(ctx, k.key("seen")).Result()
	if want := 2 * (base + 10 - sbase + 1); len(seen) != want {
		t.Fatalf("liveness cells: %d bytes, want %d", len(seen), want)
	}
	for i := 0; i < len(seen); i += 2 {
		ticket := sbase + i/2
		if written := ticket == base+1 || ticket == base+2; written != (seen[i:i+2] != "\x00\x00") {
			t.Fatalf("the liveness cell of ticket %d is %q", ticket, seen[i:i+2])
		}
	}
}

// TestReadPrequeue reads a pre-queue in many small round trips, shared by
// the readers: the entries come back in ticket order, with their draw
// keys; a pre-queue that does not hold the entries frozen is refused.
func TestReadPrequeue(t *testing.T) {
	ctx := context.Background()
	_, name, rdb := prequeueRoom(t)
	e := New(rdb, DefaultNamespace(rdb))
	const held = 1003
	fillPrequeue(t, rdb, name, held)
	seed := make([]byte, draw.SeedLen)
	for _, tc := range []struct {
		name        string
		n           int64
		read, depth int
		ok          bool
	}{
		{"as frozen", held, 7, 3, true},
		{"one call a round trip", held, 100, 1, true},
		{"more frozen than held", held + 5, 7, 3, false},
		{"fewer frozen than held", held - 5, 7, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, ts, keys, err := e.readPrequeue(ctx, name, tc.read, tc.depth, tc.n, seed)
			if !tc.ok {
				if err == nil {
					t.Fatal("read a pre-queue that does not hold the entries frozen")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range held {
				if ts[i] != int64(i+1) || vs[i] != fmt.Sprintf("v%021d", i+1) || keys[i] != draw.Key(seed, ts[i]) {
					t.Fatalf("entry %d: %s at %d", i, vs[i], ts[i])
				}
			}
		})
	}
}

// TestChunkSize: chunks are an eighth of the size from where a chunk would
// take the line past a power of two (from 2^16) until four chunks' worth
// of places past it.
func TestChunkSize(t *testing.T) {
	for _, tc := range []struct {
		line  int64
		chunk int
		want  int
	}{
		{0, 1000, 1000},
		{60000, 1000, 1000},
		{64536, 1000, 1000}, // ends at 2^16: the doubling comes with the next
		{64537, 1000, 125},
		{65536, 1000, 125},
		{65536 + 3999, 1000, 125},
		{65536 + 4000, 1000, 1000},
		{262144 + 100, 1000, 125},
		{524287, 1000, 125},
		{600000, 1000, 1000},
		{1048000, 1000, 125},
		{65536, 4, 1},
	} {
		if got := chunkSize(tc.line, tc.chunk); got != tc.want {
			t.Errorf("chunkSize(%d, %d) = %d, want %d", tc.line, tc.chunk, got, tc.want)
		}
	}
}
