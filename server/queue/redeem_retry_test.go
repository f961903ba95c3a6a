package queue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/servicetest"
)

// redeemRetryDB is the Redis database of the redeem retry tests.
const redeemRetryDB = 10

func redeemRetryRedis(t *testing.T) redis.UniversalClient {
	t.Helper()
	return servicetest.RedisAt(t, servicetest.RedisURLDB(t, redeemRetryDB))
}

// mintedPass admits one visitor and mints a pass; it returns the jti.
func mintedPass(t *testing.T, e *Engine, name string) string {
	t.Helper()
	vs, toks := gateAdmitted(t, e, name, 1)
	jti := newID(t)
	if _, err := e.MintPass(context.Background(), name, vs[0], toks[0], jti); err != nil {
		t.Fatal(err)
	}
	return jti
}

// TestRedeemRetry: a redeem retried with its session id gets the same
// session, once; any other id, or a retry after the session is gone, is
// told the pass was used.
func TestRedeemRetry(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// after runs between the first redeem and the retry.
		after func(t *testing.T, rdb redis.UniversalClient, e *Engine, name string, s Session)
		// other retries with another session id.
		other bool
		want  error
	}{
		{name: "same id", want: nil},
		{name: "other id", other: true, want: ErrTokenUsed},
		{name: "same id after the session ended", want: ErrTokenUsed,
			after: func(t *testing.T, _ redis.UniversalClient, e *Engine, name string, s Session) {
				if err := e.EndSession(ctx, name, s.ID); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "same id after the session idled", want: ErrTokenUsed,
			after: func(t *testing.T, rdb redis.UniversalClient, _ *Engine, name string, s Session) {
				setSessionExpiry(t, rdb, name, s.ID, time.Now().Add(-time.Second))
			}},
		{name: "same id after the sweep took the idle session", want: ErrTokenUsed,
			after: func(t *testing.T, rdb redis.UniversalClient, e *Engine, name string, s Session) {
				setSessionExpiry(t, rdb, name, s.ID, time.Now().Add(-time.Second))
				if _, err := e.Admit(ctx, name, time.Second, nil); err != nil {
					t.Fatal(err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := redeemRetryRedis(t)
			e, name := gateRoom(t, rdb, nil)
			jti := mintedPass(t, e, name)
			sid := newID(t)
			first, err := e.Redeem(ctx, name, jti, sid)
			if err != nil {
				t.Fatal(err)
			}
			if tc.after != nil {
				tc.after(t, rdb, e, name, first)
			}
			retryID := sid
			if tc.other {
				retryID = newID(t)
			}
			again, err := e.Redeem(ctx, name, jti, retryID)
			if !errors.Is(err, tc.want) {
				t.Fatalf("retry: %v, want %v", err, tc.want)
			}
			if tc.want == nil && again != first {
				t.Fatalf("retry: %+v, want the first redeem's %+v", again, first)
			}
			st, err := e.Stats(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if st.SessionsOpened != 1 {
				t.Errorf("sessionsOpened = %d, want 1", st.SessionsOpened)
			}
			live := 1 // the first redeem's session
			if tc.after != nil {
				live = 0
			}
			if n, _ := e.ActiveSessions(ctx, name); n != live {
				t.Errorf("%d live sessions, want %d", n, live)
			}
			if n := rdb.ZCard(ctx, testKeys(rdb, name).key("active")).Val(); int(n) != live {
				t.Errorf("%d active members, want %d (the session's slot only)", n, live)
			}
		})
	}
}

// TestRedeemRetryOfAnotherPass: a session id opened by one pass is not
// returned for another pass's redeem, even by the same caller.
func TestRedeemRetryOfAnotherPass(t *testing.T) {
	ctx := context.Background()
	rdb := redeemRetryRedis(t)
	e, name := gateRoom(t, rdb, nil)
	a, b := mintedPass(t, e, name), mintedPass(t, e, name)
	sid := newID(t)
	if _, err := e.Redeem(ctx, name, a, sid); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Redeem(ctx, name, b, newID(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Redeem(ctx, name, b, sid); !errors.Is(err, ErrTokenUsed) {
		t.Fatalf("pass b retried with pass a's session id: %v, want ErrTokenUsed", err)
	}
}

// TestConcurrentRedeemRetries: 50 redeems of one pass with one session id
// and 50 with other ids, over 3 engines, open one session. When a redeem
// with the shared id went first (the buyer whose answer timed out), or won
// the race, every redeem with that id gets its session and the others are
// told the pass was used.
func TestConcurrentRedeemRetries(t *testing.T) {
	for _, first := range []bool{true, false} {
		name := "race from the start"
		if first {
			name = "after a first redeem"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			rdb := redeemRetryRedis(t)
			e0, name := gateRoom(t, rdb, nil)
			engines := []*Engine{e0, New(redeemRetryRedis(t), e0.Namespace()), New(redeemRetryRedis(t), e0.Namespace())}
			jti := mintedPass(t, e0, name)
			sid := newID(t)
			if first {
				if _, err := e0.Redeem(ctx, name, jti, sid); err != nil {
					t.Fatal(err)
				}
			}
			type result struct {
				same bool
				s    Session
				err  error
			}
			results := make([]result, 100)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range results {
				wg.Go(func() {
					id := sid
					if i%2 == 1 {
						id = newID(t)
					}
					<-start
					s, err := engines[i%3].Redeem(ctx, name, jti, id)
					results[i] = result{same: id == sid, s: s, err: err}
				})
			}
			close(start)
			wg.Wait()

			// The winner: the shared id, or one of the others.
			winner := sid
			for _, r := range results {
				if !r.same && r.err == nil {
					winner = r.s.ID
				}
			}
			if first && winner != sid {
				t.Errorf("another id took a pass already redeemed")
			}
			for i, r := range results {
				mine := r.same && winner == sid || !r.same && r.s.ID == winner
				switch {
				case mine && (r.err != nil || r.s.ID != winner):
					t.Errorf("redeem %d (shared id %v): %q %v, want the session %q", i, r.same, r.s.ID, r.err, winner)
				case !mine && !errors.Is(r.err, ErrTokenUsed):
					t.Errorf("redeem %d (shared id %v): %v, want ErrTokenUsed", i, r.same, r.err)
				}
			}
			st, err := e0.Stats(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if st.SessionsOpened != 1 {
				t.Errorf("sessionsOpened = %d, want 1", st.SessionsOpened)
			}
			if n, _ := e0.ActiveSessions(ctx, name); n != 1 {
				t.Errorf("%d live sessions, want 1", n)
			}
			if n := rdb.ZCard(ctx, testKeys(rdb, name).key("active")).Val(); n != 1 {
				t.Errorf("%d active members, want 1", n)
			}
		})
	}
}
