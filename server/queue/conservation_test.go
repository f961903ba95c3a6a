package queue

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"waitingroom/server/room"
)

// TestConservationUnderCancelledTicks runs enters, leaves and admission
// ticks concurrently, cancelling ticks at random points. Every ticket ever
// issued must still be waiting, admitted or left, and every admitted
// visitor must hold a token.
func TestConservationUnderCancelledTicks(t *testing.T) {
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 2000 }))
	ctx := context.Background()
	vs := visitors(t, 600)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ticks, cancelled int
	var mu sync.Mutex
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				tctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(1500))*time.Microsecond)
				_, err := e.Admit(tctx, name, 5*time.Millisecond, tokens(t, 20))
				cancel()
				mu.Lock()
				ticks++
				if err != nil {
					cancelled++
				}
				mu.Unlock()
				time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
			}
		})
	}
	var enterWG sync.WaitGroup
	for w := range 6 {
		enterWG.Go(func() {
			for i := w; i < len(vs); i += 6 {
				if _, err := e.Enter(ctx, name, vs[i]); err != nil {
					t.Error(err)
					return
				}
				if i%7 == 0 {
					if _, err := e.Leave(ctx, name, vs[i]); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	enterWG.Wait()
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	if cancelled == 0 || cancelled == ticks {
		t.Fatalf("%d of %d ticks were cancelled; the test needs some of each", cancelled, ticks)
	}

	st, err := e.Stats(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if st.Issued != int64(len(vs)) {
		t.Fatalf("issued %d tickets for %d visitors", st.Issued, len(vs))
	}
	if st.Waiting+st.Admitted+st.Left != st.Issued {
		t.Fatalf("lost tickets: waiting %d + admitted %d + left %d != issued %d",
			st.Waiting, st.Admitted, st.Left, st.Issued)
	}
	var inQueue, withToken, gone int64
	k := roomKeys(name)
	for _, v := range vs {
		_, zerr := rdb.ZScore(ctx, k.key("queue"), v).Result()
		n, _ := rdb.Exists(ctx, k.token(v)).Result()
		switch {
		case zerr == nil && n == 1:
			t.Fatalf("visitor %s is both waiting and admitted", v)
		case zerr == nil:
			inQueue++
		case n == 1:
			withToken++
		default:
			gone++
		}
	}
	if inQueue != st.Waiting || withToken != st.Admitted-st.Forfeited || gone != st.Left+st.Forfeited {
		t.Fatalf("per-visitor audit: %d waiting, %d with token, %d gone; counters say %d, %d-%d, %d+%d",
			inQueue, withToken, gone, st.Waiting, st.Admitted, st.Forfeited, st.Left, st.Forfeited)
	}
	t.Logf("%d ticks (%d cancelled): %d admitted, %d waiting, %d left", ticks, cancelled, st.Admitted, st.Waiting, st.Left)
}
