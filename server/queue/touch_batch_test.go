package queue

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestToucherSend: checks sent together in one pipeline each get their
// own answer: a live session is reported (and renewed), an ended one and
// one that never was are gone, a check whose caller gave up is left out.
// After a SCRIPT FLUSH the pipeline's checks are run again alone, and
// answer the same.
func TestToucherSend(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rdb   func(t *testing.T) redis.UniversalClient
		flush bool
	}{
		{"redis", gateRedis, false},
		{"after a script flush", func(t *testing.T) redis.UniversalClient {
			rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
			t.Cleanup(func() { rdb.Close() })
			return rdb
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := tc.rdb(t)
			e, name := gateRoom(t, rdb, nil)
			_, live1 := redeemed(t, e, name)
			_, live2 := redeemed(t, e, name)
			_, ended := redeemed(t, e, name)
			if err := e.EndSession(ctx, name, ended.ID); err != nil {
				t.Fatal(err)
			}
			gaveUp, cancel := context.WithCancel(ctx)
			cancel()
			calls := []*touchCall{
				{ctx: ctx, room: name, id: live1.ID, renew: true},
				{ctx: ctx, room: name, id: ended.ID, renew: true},
				{ctx: gaveUp, room: name, id: live2.ID, renew: true},
				{ctx: ctx, room: name, id: newID(t), renew: false},
				{ctx: ctx, room: name, id: live2.ID, renew: false},
			}
			for _, c := range calls {
				c.done = make(chan struct{})
			}
			if tc.flush {
				if err := rdb.ScriptFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			}
			e.touches.send(calls)
			for i, want := range []struct {
				id   string
				gone bool
				err  error
			}{{live1.ID, false, nil}, {"", true, nil}, {"", false, context.Canceled}, {"", true, nil}, {live2.ID, false, nil}} {
				c := calls[i]
				select {
				case <-c.done:
				default:
					t.Fatalf("check %d not answered", i)
				}
				if !errors.Is(c.err, want.err) {
					t.Fatalf("check %d: error %v, want %v", i, c.err, want.err)
				}
				if c.err != nil {
					continue
				}
				s, ok := touched(name, c.id, c.res)
				if ok == want.gone || (ok && s.ID != want.id) {
					t.Fatalf("check %d: %+v live %v, want %s gone %v", i, s, ok, want.id, want.gone)
				}
			}
		})
	}
}

// liveSessions returns a gated room with n live sessions.
func liveSessions(t *testing.T, n int) (*Engine, string, []Session) {
	t.Helper()
	e, name := gateRoom(t, gateRedis(t), nil)
	var live []Session
	for range n {
		_, s := redeemed(t, e, name)
		live = append(live, s)
	}
	return e, name, live
}

// TestConcurrentTouches: many checks at once, of live and ended sessions,
// each get their own session's answer, however they were gathered.
func TestConcurrentTouches(t *testing.T) {
	ctx := context.Background()
	e, name, live := liveSessions(t, 4)
	_, ended := redeemed(t, e, name)
	if err := e.EndSession(ctx, name, ended.ID); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for w := range 32 {
		wg.Go(func() {
			for i := range 20 {
				if (w+i)%5 == 4 {
					if _, err := e.TouchSession(ctx, name, ended.ID, true); !errors.Is(err, ErrSessionGone) {
						errs <- errors.New("an ended session answered: " + errString(err))
						return
					}
					continue
				}
				want := live[(w+i)%4]
				s, err := e.TouchSession(ctx, name, want.ID, true)
				if err != nil || s.ID != want.ID || s.Room != name {
					errs <- errors.New("session " + want.ID + " answered " + s.ID + ": " + errString(err))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestTouchesQueuedGoTogether: the checks that arrive while a round trip
// runs go together in the next one, in one pipeline, each answered for
// its own session.
func TestTouchesQueuedGoTogether(t *testing.T) {
	ctx := context.Background()
	e, name, sessions := liveSessions(t, 5)
	var sizes []int
	var mu sync.Mutex
	e.touches.sent = func(n int) { mu.Lock(); sizes = append(sizes, n); mu.Unlock() }
	// A round trip is in flight: every check queues behind it.
	e.touches.mu.Lock()
	e.touches.inFlight = true
	e.touches.mu.Unlock()
	var wg sync.WaitGroup
	got := make([]Session, len(sessions))
	errs := make([]error, len(sessions))
	for i, s := range sessions {
		wg.Go(func() { got[i], errs[i] = e.TouchSession(ctx, name, s.ID, true) })
	}
	for queued := 0; queued < len(sessions); {
		runtime.Gosched()
		e.touches.mu.Lock()
		queued = len(e.touches.pending)
		e.touches.mu.Unlock()
	}
	e.touches.next() // the round trip in flight answered
	wg.Wait()
	for i, s := range sessions {
		if errs[i] != nil || got[i].ID != s.ID {
			t.Errorf("check %d: %+v, %v; want session %s", i, got[i], errs[i], s.ID)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sizes) != 1 || sizes[0] != len(sessions) {
		t.Errorf("round trips of %v checks, want one of %d", sizes, len(sessions))
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}
