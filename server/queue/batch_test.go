package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// heldBatcher wraps run so that its first call waits for release: the
// enters made meanwhile queue up, in a known order, for the next call. It
// records each call's size.
type heldBatcher struct {
	b       *batcher
	gate    chan struct{}
	mu      sync.Mutex
	sizes   []int
	release func()
}

func newHeldBatcher(run batchFunc, max int, wait time.Duration) *heldBatcher {
	h := &heldBatcher{gate: make(chan struct{})}
	h.release = sync.OnceFunc(func() { close(h.gate) })
	h.b = newBatcher(func(ctx context.Context, room string, reqs []placeReq) ([]placeResult, error) {
		h.mu.Lock()
		first := len(h.sizes) == 0
		h.sizes = append(h.sizes, len(reqs))
		h.mu.Unlock()
		if first {
			<-h.gate
		}
		return run(ctx, room, reqs)
	}, max, 1, wait)
	return h
}

// callSizes returns the sizes of the calls made so far.
func (h *heldBatcher) callSizes() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.sizes...)
}

// waiting returns how many enters of room wait for the next call.
func (h *heldBatcher) waiting(room string) int {
	h.b.mu.Lock()
	defer h.b.mu.Unlock()
	if rb := h.b.rooms[room]; rb != nil {
		return len(rb.pending)
	}
	return 0
}

// waitFor waits until n enters of room wait for the next call.
func (h *heldBatcher) waitFor(t *testing.T, room string, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); h.waiting(room) != n; time.Sleep(100 * time.Microsecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d enters wait, want %d", h.waiting(room), n)
		}
	}
}

// enterResult is what one enter got.
type enterResult struct {
	p   Position
	err error
}

// TestBatchedEnters: enters that go in one script call are placed one
// after the other in the order they arrived, each atomically and
// idempotently: a visitor entered several times, in one call or in two,
// keeps one ticket, and the tickets follow the arrival order (strict FIFO
// by the room's counter), on the real Redis and on the
// embedded one of `make run`.
func TestBatchedEnters(t *testing.T) {
	mini := miniredis.RunT(t)
	backends := []struct {
		name string
		rdb  func() redis.UniversalClient
	}{
		{"redis", func() redis.UniversalClient { return servicetest.Redis(t) }},
		{"embedded", func() redis.UniversalClient { return redis.NewClient(&redis.Options{Addr: mini.Addr()}) }},
	}
	// Each case lists its enters by visitor index, in arrival order; the
	// enters all go in the call after the held first one (visitor "first").
	for _, tc := range []struct {
		name   string
		enters []int
	}{
		{"one visitor entered twenty times", []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"twenty visitors in arrival order", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}},
		{"five visitors entered three times, interleaved", []int{3, 1, 4, 1, 0, 2, 3, 4, 0, 2, 2, 1, 0, 3, 4}},
		{"the first visitor again, behind others", []int{-1, 0, -1, 1}},
		// 100 and up: visitors minted for their enter (EnterNew), whose
		// runs join together.
		{"minted visitors in runs, between others", []int{100, 101, 0, 102, 103, 104, -1, 1, 0, 105, 2}},
		{"only minted visitors", []int{100, 101, 102, 103, 104, 105, 106, 107}},
	} {
		for _, be := range backends {
			t.Run(tc.name+"/"+be.name, func(t *testing.T) {
				ctx := context.Background()
				rdb := be.rdb()
				name := servicetest.RoomName(t, rdb)
				e := New(rdb, DefaultNamespace(rdb))
				if err := e.SaveRoom(ctx, name, room.Defaults(name)); err != nil {
					t.Fatal(err)
				}
				h := newHeldBatcher(e.places, defaultMaxBatch, EnterWait)
				e.enters = h.b
				first := visitors(t, 1)[0]
				vs := visitors(t, 20)
				minted := visitors(t, 10)
				who := func(i int) string {
					switch {
					case i < 0:
						return first
					case i >= 100:
						return minted[i-100]
					}
					return vs[i]
				}
				results := make([]enterResult, len(tc.enters)+1)
				var wg sync.WaitGroup
				enter := func(slot int, v string, isNew bool) {
					wg.Go(func() {
						var p Position
						var err error
						if isNew {
							p, err = e.EnterNew(ctx, name, v, "", Campaign{})
						} else {
							p, err = e.Enter(ctx, name, v)
						}
						results[slot] = enterResult{p, err}
					})
				}
				enter(0, first, false)
				for deadline := time.Now().Add(5 * time.Second); len(h.callSizes()) == 0; time.Sleep(100 * time.Microsecond) {
					if time.Now().After(deadline) {
						t.Fatal("the first enter made no call")
					}
				}
				for i, v := range tc.enters {
					enter(i+1, who(v), v >= 100)
					h.waitFor(t, name, i+1)
				}
				h.release()
				wg.Wait()

				if got := h.callSizes(); len(got) != 2 || got[0] != 1 || got[1] != len(tc.enters) {
					t.Fatalf("calls %v, want [1 %d]", got, len(tc.enters))
				}
				// Expected: tickets by first arrival, starting after first's.
				want := map[string]int64{first: 1}
				for _, v := range tc.enters {
					if _, ok := want[who(v)]; !ok {
						want[who(v)] = int64(len(want) + 1)
					}
				}
				created := map[string]bool{first: true}
				for i, r := range results {
					v := first
					if i > 0 {
						v = who(tc.enters[i-1])
					}
					if r.err != nil || r.p.Status != StatusWaiting {
						t.Fatalf("enter %d (%s): %+v %v", i, v, r.p, r.err)
					}
					if r.p.Ticket != want[v] || r.p.Rank != want[v]-1 {
						t.Errorf("enter %d: ticket %d rank %d, want ticket %d rank %d (arrival order)", i, r.p.Ticket, r.p.Rank, want[v], want[v]-1)
					}
					// Only a visitor's first enter makes their place.
					if i > 0 && r.p.Created == created[v] {
						t.Errorf("enter %d of %s: created %v, want %v", i, v, r.p.Created, !created[v])
					}
					created[v] = true
				}
				if counts, err := e.Attribution(ctx, name); err != nil || len(counts) != 1 || counts[0].Joined != int64(len(want)) {
					t.Errorf("attribution %+v (%v), want %d direct joins", counts, err, len(want))
				}
				k := testKeys(rdb, name)
				if n, err := rdb.ZCard(ctx, k.key("queue")).Result(); err != nil || n != int64(len(want)) {
					t.Errorf("line of %d (%v), want %d: one place per visitor", n, err, len(want))
				}
				if seq, err := rdb.Get(ctx, k.key("seq")).Int64(); err != nil || seq != int64(len(want)) {
					t.Errorf("counter at %d (%v), want %d: no ticket is skipped", seq, err, len(want))
				}
				// Every place is marked seen (2-byte cells from seenbase 0).
				seen, err := rdb.Get(ctx, k.key("seen")).Bytes()
				if err != nil {
					t.Fatal(err)
				}
				for v, tk := range want {
					if int(2*tk+1) >= len(seen) || seen[2*tk] == 0 && seen[2*tk+1] == 0 {
						t.Errorf("%s (ticket %d) is not marked seen", v, tk)
					}
				}
			})
		}
	}
}

// TestConcurrentEntersKeepOneTicket: free-running enters, many of each
// visitor at once, batch as they come and still give each visitor one
// ticket, the tickets dense.
func TestConcurrentEntersKeepOneTicket(t *testing.T) {
	e, name, rdb := newRoom(t, room.Defaults("test"))
	ctx := context.Background()
	vs := visitors(t, 16)
	const each = 25
	tickets := make([][]int64, len(vs))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, v := range vs {
		for range each {
			wg.Go(func() {
				p, err := e.Enter(ctx, name, v)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				tickets[i] = append(tickets[i], p.Ticket)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	seen := map[int64]bool{}
	for i, ts := range tickets {
		for _, tk := range ts {
			if tk != ts[0] {
				t.Fatalf("visitor %d got tickets %v", i, ts)
			}
		}
		if seen[ts[0]] || ts[0] < 1 || ts[0] > int64(len(vs)) {
			t.Fatalf("visitor %d's ticket %d is shared or out of 1..%d", i, ts[0], len(vs))
		}
		seen[ts[0]] = true
	}
	if n, err := rdb.ZCard(ctx, testKeys(rdb, name).key("queue")).Result(); err != nil || n != int64(len(vs)) {
		t.Fatalf("line of %d (%v), want %d", n, err, len(vs))
	}
}

// TestBatcher checks the batcher alone, with a stand-in for the script.
func TestBatcher(t *testing.T) {
	errDown := errors.New("redis down")
	for _, tc := range []struct {
		name string
		max  int
		// enters queue behind the held first one; cancel lists those
		// whose caller gives up before the next call.
		enters int
		cancel []int
		fail   bool
		// late holds the first call this long past half the batcher's
		// wait: the enters behind it have waited too long.
		late bool
		// wantCalls are the sizes of the calls after the held one.
		wantCalls []int
	}{
		{name: "the waiting enters go in one call", max: 64, enters: 10, wantCalls: []int{10}},
		{name: "at most max a call, first come first", max: 3, enters: 7, wantCalls: []int{3, 3, 1}},
		{name: "a failed call fails every enter in it", max: 64, enters: 5, fail: true, wantCalls: []int{5}},
		{name: "an enter given up is not sent", max: 64, enters: 4, cancel: []int{0, 2}, wantCalls: []int{2}},
		{name: "every enter given up: no call", max: 64, enters: 2, cancel: []int{0, 1}, wantCalls: nil},
		{name: "enters that waited past half the wait are not sent", max: 64, enters: 3, late: true, wantCalls: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const wait = 200 * time.Millisecond
			var mu sync.Mutex
			var sent []string
			run := func(ctx context.Context, _ string, reqs []placeReq) ([]placeResult, error) {
				// Every call is bounded by half the wait.
				if d, ok := ctx.Deadline(); !ok || time.Until(d) > wait/2 {
					t.Errorf("a call's deadline is %v away (set %v), want at most %v", time.Until(d), ok, wait/2)
				}
				mu.Lock()
				defer mu.Unlock()
				out := make([]placeResult, len(reqs))
				for i, r := range reqs {
					sent = append(sent, r.visitor)
					out[i].p = Position{Ticket: int64(len(sent))}
				}
				if tc.fail && r0(reqs) != "held" {
					return nil, errDown
				}
				return out, nil
			}
			h := newHeldBatcher(run, tc.max, wait)
			ctx := context.Background()
			heldDone := make(chan error, 1)
			go func() { _, err := h.b.do(ctx, "r", placeReq{visitor: "held"}); heldDone <- err }()
			for deadline := time.Now().Add(5 * time.Second); len(h.callSizes()) == 0; time.Sleep(100 * time.Microsecond) {
				if time.Now().After(deadline) {
					t.Fatal("the first enter made no call")
				}
			}
			results := make([]enterResult, tc.enters)
			cancels := make([]context.CancelFunc, tc.enters)
			var wg sync.WaitGroup
			for i := range tc.enters {
				cctx, cancel := context.WithCancel(ctx)
				cancels[i] = cancel
				wg.Go(func() {
					p, err := h.b.do(cctx, "r", placeReq{visitor: fmt.Sprint(i)})
					results[i] = enterResult{p, err}
				})
				h.waitFor(t, "r", i+1)
			}
			for _, i := range tc.cancel {
				cancels[i]()
				h.waitFor(t, "r", tc.enters-countUpTo(tc.cancel, i))
			}
			if tc.late {
				time.Sleep(wait/2 + 20*time.Millisecond)
			}
			h.release()
			wg.Wait()
			if err := <-heldDone; err != nil {
				t.Fatalf("the held enter: %v", err)
			}
			for _, c := range cancels {
				c()
			}
			if got := h.callSizes()[1:]; fmt.Sprint(got) != fmt.Sprint(tc.wantCalls) {
				t.Errorf("calls after the held one: %v, want %v", got, tc.wantCalls)
			}
			var wantSent []string
			next := int64(2) // ticket 1 is the held enter's
			for i, r := range results {
				switch {
				case slices.Contains(tc.cancel, i):
					if !errors.Is(r.err, context.Canceled) {
						t.Errorf("enter %d, given up: %v", i, r.err)
					}
				case tc.late:
					if !errors.Is(r.err, context.DeadlineExceeded) {
						t.Errorf("enter %d, waited too long: %v", i, r.err)
					}
				case tc.fail:
					if !errors.Is(r.err, errDown) || !strings.Contains(r.err.Error(), "batch of") {
						t.Errorf("enter %d of a failed call: %v", i, r.err)
					}
					wantSent = append(wantSent, fmt.Sprint(i))
					next++
				default:
					if r.err != nil || r.p.Ticket != next {
						t.Errorf("enter %d: %+v %v, want ticket %d (arrival order)", i, r.p, r.err, next)
					}
					wantSent = append(wantSent, fmt.Sprint(i))
					next++
				}
			}
			if got := fmt.Sprint(sent[1:]); got != fmt.Sprint(wantSent) {
				t.Errorf("sent %v, want %v", got, wantSent)
			}
			// The last call's goroutine lets the room go once it finds
			// nobody waiting, just after answering.
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Microsecond) {
				h.b.mu.Lock()
				n := len(h.b.rooms)
				h.b.mu.Unlock()
				if n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("an idle batcher keeps %d rooms", n)
				}
			}
		})
	}
}

func r0(reqs []placeReq) string { return reqs[0].visitor }

// countUpTo counts the elements of xs up to and including x's first place.
func countUpTo(xs []int, x int) int {
	for i, y := range xs {
		if y == x {
			return i + 1
		}
	}
	return 0
}

// TestEnterNew: an enter of a visitor minted for it (EnterNew) skips the
// look-ups for a place they cannot have, and answers as EnterFrom answers
// a new visitor, in every state of a room; its joins are counted as
// EnterFrom's are.
func TestEnterNew(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     func(*room.Settings)
		soldOut bool
		camp    Campaign
		wantErr error
		want    Status
	}{
		{name: "open", want: StatusWaiting},
		{name: "open, by a campaign", camp: Campaign{Source: "kakao", Medium: "social", Campaign: "launch"}, want: StatusWaiting},
		{name: "pre-queue", set: func(s *room.Settings) { s.PrequeueAt, s.OpensAt = at(-time.Hour), at(time.Hour) }, want: StatusPrequeued},
		{name: "not open yet", set: func(s *room.Settings) { s.OpensAt = at(time.Hour) }, wantErr: ErrNotOpen, want: StatusNotEntered},
		{name: "closed", set: func(s *room.Settings) { s.ClosesAt = at(-time.Millisecond) }, wantErr: ErrSaleEnded, want: StatusNotEntered},
		{name: "sold out", soldOut: true, want: StatusNotEntered},
		{name: "challenge", set: func(s *room.Settings) { s.Challenge = room.ChallengeAlways }, wantErr: ErrChallengeRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e, name, _ := newRoom(t, settings(tc.set))
			if tc.soldOut {
				if err := e.SetSoldOut(ctx, name, true); err != nil {
					t.Fatal(err)
				}
			}
			vs := visitors(t, 4)
			const net = "203.0.113.0/24"
			var got [4]Position
			for i, v := range vs {
				var err error
				if i%2 == 0 {
					got[i], err = e.EnterFrom(ctx, name, v, net, tc.camp)
				} else {
					got[i], err = e.EnterNew(ctx, name, v, net, tc.camp)
				}
				if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
					t.Fatalf("enter %d: %v, want %v", i, err, tc.wantErr)
				}
			}
			for i := 1; i < len(vs); i++ {
				a, b := got[i-1], got[i]
				if b.Status != tc.want || b.Status != a.Status || b.Phase != a.Phase || b.Created != a.Created {
					t.Errorf("enter %d: %+v; the one before: %+v", i, b, a)
				}
				if tc.want == StatusWaiting && (b.Ticket != a.Ticket+1 || b.Rank != a.Rank+1 || b.Waiting != a.Waiting+1 || b.EstimatedWaitSeconds == nil) {
					t.Errorf("enter %d: ticket %d rank %d of %d after %d, %d of %d", i, b.Ticket, b.Rank, b.Waiting, a.Ticket, a.Rank, a.Waiting)
				}
			}
			if tc.want == StatusWaiting || tc.want == StatusPrequeued {
				// Entered again by their cookie, every visitor keeps their ticket.
				for i, v := range vs {
					if p, err := e.EnterFrom(ctx, name, v, net, tc.camp); err != nil || p.Ticket != got[i].Ticket {
						t.Errorf("visitor %d again: %+v %v, want ticket %d", i, p, err, got[i].Ticket)
					}
				}
				counts, err := e.Attribution(ctx, name)
				if err != nil || len(counts) != 1 || counts[0].Campaign != tc.camp.Counted() || counts[0].Joined != int64(len(vs)) {
					t.Errorf("attribution: %+v %v, want %d joins of %+v", counts, err, len(vs), tc.camp)
				}
			}
			if tc.want == StatusPrequeued {
				if nets, err := e.Networks(ctx, name, 10); err != nil || len(nets) != 1 || nets[0].Entries != int64(len(vs)) {
					t.Errorf("networks: %+v %v", nets, err)
				}
			}
		})
	}
}
