package queue

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// gateDB is the Redis database of the gate's tests.
const gateDB = 3

func gateRedis(t *testing.T) redis.UniversalClient {
	t.Helper()
	return servicetest.RedisAt(t, servicetest.RedisURLDB(t, gateDB))
}

// gateRoom saves a fresh room (rate 1000) on rdb and primes its rate clock.
// The engine decides by a fake clock (clockOf).
func gateRoom(t *testing.T, rdb redis.UniversalClient, mut func(*room.Settings)) (*Engine, string) {
	t.Helper()
	name := servicetest.RoomName(t, rdb)
	e := New(rdb, DefaultNamespace(rdb))
	useClock(t, e, rdb)
	s := settings(func(s *room.Settings) { s.Rate = 1000 })
	if mut != nil {
		mut(&s)
	}
	ctx := context.Background()
	if err := e.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Admit(ctx, name, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	return e, name
}

// gateAdmitted enters n visitors, admits them and returns them with their
// tokens.
func gateAdmitted(t *testing.T, e *Engine, name string, n int) ([]string, []string) {
	t.Helper()
	ctx := context.Background()
	vs := visitors(t, n)
	for _, v := range vs {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	if a := admitAfter(t, e, name, 20*time.Millisecond+time.Duration(n)*time.Millisecond, time.Second, n); len(a.Visitors) != n {
		t.Fatalf("admitted %d of %d", len(a.Visitors), n)
	}
	toks := make([]string, n)
	for i, v := range vs {
		p, err := e.Position(ctx, name, v)
		if err != nil || p.EntryToken == nil {
			t.Fatalf("position of an admitted visitor: %+v %v", p, err)
		}
		toks[i] = *p.EntryToken
	}
	return vs, toks
}

// newID returns 16 random bytes in URL-safe base64, as jtis and session
// ids are.
func newID(t testing.TB) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// redeemed admits one visitor, mints a pass and redeems it.
func redeemed(t *testing.T, e *Engine, name string) (string, Session) {
	t.Helper()
	ctx := context.Background()
	vs, toks := gateAdmitted(t, e, name, 1)
	jti := newID(t)
	if _, err := e.MintPass(ctx, name, vs[0], toks[0], jti); err != nil {
		t.Fatal(err)
	}
	s, err := e.Redeem(ctx, name, jti, newID(t))
	if err != nil {
		t.Fatal(err)
	}
	return vs[0], s
}

// setSessionExpiry moves session id's expiry to at, as if time had gone by.
func setSessionExpiry(t *testing.T, rdb redis.UniversalClient, name, id string, at time.Time) {
	t.Helper()
	if err := rdb.ZAddXX(context.Background(), testKeys(rdb, name).key("active"),
		redis.Z{Score: float64(at.UnixMilli()), Member: "s:" + id}).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestGatePassToSession: mint, redeem, touch, end, on real Redis and on
// the embedded one.
func TestGatePassToSession(t *testing.T) {
	mini := miniredis.RunT(t)
	for _, tc := range []struct {
		name string
		rdb  redis.UniversalClient
	}{{"redis", gateRedis(t)}, {"embedded", redis.NewClient(&redis.Options{Addr: mini.Addr()})}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := tc.rdb
			e, name := gateRoom(t, rdb, nil)
			vs, toks := gateAdmitted(t, e, name, 1)
			v, tok := vs[0], toks[0]
			jti := newID(t)
			exp, err := e.MintPass(ctx, name, v, tok, jti)
			if err != nil {
				t.Fatal(err)
			}
			if want := readPass(t, rdb, name, v).expiry; exp.UnixMilli() != want {
				t.Fatalf("mint says the pass expires at %d, the pass at %d", exp.UnixMilli(), want)
			}
			sid := newID(t)
			s, err := e.Redeem(ctx, name, jti, sid)
			if err != nil {
				t.Fatal(err)
			}
			if s.ID != sid || s.Room != name || s.Subject != Subject(e.Namespace(), v) || len(s.Subject) != 32 ||
				s.Mode != room.SessionIdle || s.IdleSeconds != room.DefaultSessionSeconds ||
				s.Expires.Sub(s.Started) != room.DefaultSessionSeconds*time.Second {
				t.Fatalf("session %+v", s)
			}
			// The pass's slot is the session's now.
			k := testKeys(rdb, name)
			if _, err := rdb.ZScore(ctx, k.key("active"), v).Result(); !errors.Is(err, redis.Nil) {
				t.Fatalf("the pass still holds a slot: %v", err)
			}
			if got := rdb.ZScore(ctx, k.key("active"), "s:"+sid).Val(); int64(got) != s.Expires.UnixMilli() {
				t.Fatalf("the session's slot expires at %v, want %d", got, s.Expires.UnixMilli())
			}
			if n, err := e.ActiveSessions(ctx, name); n != 1 || err != nil {
				t.Fatalf("active sessions %d %v", n, err)
			}
			st, _ := e.Stats(ctx, name)
			if st.Active != 1 || st.Sessions != 1 || st.SessionsOpened != 1 || st.Consumed != 0 || st.Expired != 0 {
				t.Fatalf("stats after the redeem %+v", st)
			}
			// Used: no second redeem, no second mint, no order.
			if _, err := e.Redeem(ctx, name, jti, newID(t)); !errors.Is(err, ErrTokenUsed) {
				t.Fatalf("second redeem: %v", err)
			}
			if _, err := e.MintPass(ctx, name, v, tok, newID(t)); !errors.Is(err, ErrTokenUsed) {
				t.Fatalf("mint after the redeem: %v", err)
			}
			if _, err := e.Claim(ctx, name, v, tok, 0); !errors.Is(err, ErrTokenUsed) {
				t.Fatalf("order claim after the redeem: %v", err)
			}
			clockOf(t, e).Advance(5 * time.Millisecond)
			got, err := e.TouchSession(ctx, name, sid, true)
			if err != nil || got.Subject != s.Subject || !got.Started.Equal(s.Started) || got.Expires.Before(s.Expires) {
				t.Fatalf("touch %+v %v, after %+v", got, err, s)
			}
			if err := e.EndSession(ctx, name, sid); err != nil {
				t.Fatal(err)
			}
			if _, err := e.TouchSession(ctx, name, sid, false); !errors.Is(err, ErrSessionGone) {
				t.Fatalf("touch of an ended session: %v", err)
			}
			if err := e.EndSession(ctx, name, sid); err != nil {
				t.Fatalf("ending a gone session: %v", err)
			}
			st, _ = e.Stats(ctx, name)
			if st.Active != 0 || st.Sessions != 0 || st.SessionsEnded != 1 || st.SessionsIdle != 0 {
				t.Fatalf("stats after the end %+v", st)
			}
			if n, _ := e.ActiveSessions(ctx, name); n != 0 {
				t.Fatalf("%d sessions after the end", n)
			}
		})
	}
}

func TestGatePassRefusals(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	e, name := gateRoom(t, rdb, nil)
	vs, toks := gateAdmitted(t, e, name, 3)
	other := tokens(t, 1)[0]

	for _, tc := range []struct {
		name       string
		v, tok, id string
		want       error
	}{
		{"foreign token", vs[0], toks[1], newID(t), ErrTokenInvalid},
		{"unknown token", vs[0], other, newID(t), ErrTokenInvalid},
		{"malformed token", vs[0], "x", newID(t), ErrTokenInvalid},
		{"visitor without a pass", visitors(t, 1)[0], toks[0], newID(t), ErrTokenInvalid},
		{"malformed jti", vs[0], toks[0], "short", ErrTokenInvalid},
	} {
		t.Run("mint: "+tc.name, func(t *testing.T) {
			if _, err := e.MintPass(ctx, name, tc.v, tc.tok, tc.id); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, jti string }{
		{"never minted", newID(t)},
		{"malformed", "not a jti"},
		{"empty", ""},
	} {
		t.Run("redeem: "+tc.name, func(t *testing.T) {
			if _, err := e.Redeem(ctx, name, tc.jti, newID(t)); !errors.Is(err, ErrPassUnknown) {
				t.Fatalf("got %v, want ErrPassUnknown", err)
			}
		})
	}
	t.Run("a jti of another visitor", func(t *testing.T) {
		jti := newID(t)
		if _, err := e.MintPass(ctx, name, vs[1], toks[1], jti); err != nil {
			t.Fatal(err)
		}
		if _, err := e.MintPass(ctx, name, vs[2], toks[2], jti); !errors.Is(err, ErrTokenInvalid) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("claimed by an order", func(t *testing.T) {
		c, err := e.Claim(ctx, name, vs[2], toks[2], 0)
		if err != nil {
			t.Fatal(err)
		}
		var we *WaitError
		if _, err := e.MintPass(ctx, name, vs[2], toks[2], newID(t)); !errors.As(err, &we) || !errors.Is(err, ErrTokenInUse) {
			t.Fatalf("got %v", err)
		}
		if err := e.Release(ctx, name, vs[2], c.Holder, 0); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("reminted", func(t *testing.T) {
		old, cur := newID(t), newID(t)
		for _, id := range []string{old, cur} {
			if _, err := e.MintPass(ctx, name, vs[2], toks[2], id); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.Redeem(ctx, name, old, newID(t)); !errors.Is(err, ErrPassUnknown) {
			t.Fatalf("the replaced jti: %v", err)
		}
		if _, err := e.Redeem(ctx, name, cur, newID(t)); err != nil {
			t.Fatalf("the current jti: %v", err)
		}
	})
	t.Run("expired", func(t *testing.T) {
		jti := newID(t)
		if _, err := e.MintPass(ctx, name, vs[0], toks[0], jti); err != nil {
			t.Fatal(err)
		}
		agePass(t, rdb, name, vs[0], 301*time.Second)
		if _, err := e.MintPass(ctx, name, vs[0], toks[0], newID(t)); !errors.Is(err, ErrTokenInvalid) {
			t.Fatalf("mint of an expired pass: %v", err)
		}
		if _, err := e.Redeem(ctx, name, jti, newID(t)); !errors.Is(err, ErrPassUnknown) {
			t.Fatalf("redeem of an expired pass: %v", err)
		}
		// The sweep takes its jti with it.
		if _, err := e.Admit(ctx, name, time.Second, nil); err != nil {
			t.Fatal(err)
		}
		if ok := rdb.HExists(ctx, testKeys(rdb, name).key("jtis"), jti).Val(); ok {
			t.Fatal("the expired pass's jti is still recorded")
		}
		if ok := rdb.HExists(ctx, testKeys(rdb, name).key("jtiof"), vs[0]).Val(); ok {
			t.Fatal("the expired pass's visitor still names a jti")
		}
	})
}

// TestConcurrentRedeemsAcrossEngines: 100 redeems of one jti over 3
// instances (3 clients) open exactly one session.
func TestConcurrentRedeemsAcrossEngines(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	e0, name := gateRoom(t, rdb, nil)
	engines := []*Engine{e0, New(gateRedis(t), e0.Namespace()), New(gateRedis(t), e0.Namespace())}
	vs, toks := gateAdmitted(t, e0, name, 1)
	jti := newID(t)
	if _, err := e0.MintPass(ctx, name, vs[0], toks[0], jti); err != nil {
		t.Fatal(err)
	}
	var ok, used atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 100 {
		wg.Go(func() {
			<-start
			_, err := engines[i%3].Redeem(ctx, name, jti, newID(t))
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrTokenUsed), errors.Is(err, ErrTokenInUse):
				used.Add(1)
			default:
				t.Errorf("redeem: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if ok.Load() != 1 || used.Load() != 99 {
		t.Fatalf("%d redeems succeeded, %d were told used", ok.Load(), used.Load())
	}
	if n, _ := e0.ActiveSessions(ctx, name); n != 1 {
		t.Fatalf("%d sessions", n)
	}
}

// TestMintingAgainKeepsOneJti: the maps never grow with mints, and go
// with the pass's tombstone.
func TestMintingAgainKeepsOneJti(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	e, name := gateRoom(t, rdb, nil)
	vs, toks := gateAdmitted(t, e, name, 1)
	k := testKeys(rdb, name)
	var last string
	for range 50 {
		last = newID(t)
		if _, err := e.MintPass(ctx, name, vs[0], toks[0], last); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := rdb.HLen(ctx, k.key("jtis")).Val(), rdb.HLen(ctx, k.key("jtiof")).Val(); a != 1 || b != 1 {
		t.Fatalf("after 50 mints: %d jtis, %d visitors", a, b)
	}
	s, err := e.Redeem(ctx, name, last, newID(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.EndSession(ctx, name, s.ID); err != nil {
		t.Fatal(err)
	}
	// The tombstone's time passes: the sweep drops it and the jti.
	done, _ := rdb.ZScore(ctx, k.key("done"), vs[0]).Result()
	rdb.ZAdd(ctx, k.key("done"), redis.Z{Score: done - 301_000, Member: vs[0]})
	if _, err := e.Admit(ctx, name, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"jtis", "jtiof", "sessions"} {
		if n := rdb.HLen(ctx, k.key(key)).Val(); n != 0 {
			t.Fatalf("%s keeps %d entries", key, n)
		}
	}
	// Giving up a minted pass drops its jti too.
	vs, toks = gateAdmitted(t, e, name, 1)
	if _, err := e.MintPass(ctx, name, vs[0], toks[0], newID(t)); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.Leave(ctx, name, vs[0]); !ok || err != nil {
		t.Fatalf("leave: %v %v", ok, err)
	}
	if a, b := rdb.HLen(ctx, k.key("jtis")).Val(), rdb.HLen(ctx, k.key("jtiof")).Val(); a != 0 || b != 0 {
		t.Fatalf("after a leave: %d jtis, %d visitors", a, b)
	}
}

// TestGateHoldPrior: before any slot is released, the ETA takes a slot to
// be held for the pass's TTL, or, in a room that hands its passes to a
// shop, for the session they open.
func TestGateHoldPrior(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	for _, tc := range []struct {
		name   string
		target string
		hold   float64
	}{
		{"built-in orders", "", room.DefaultTokenTTL},
		{"gate", "https://shop.example/buy", 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, name := gateRoom(t, rdb, func(s *room.Settings) {
				s.MaxActive, s.TargetURL, s.SessionSeconds = 10, tc.target, 60
			})
			snap, err := e.Snapshot(ctx, name)
			if err != nil || snap.Slots == nil || snap.Slots.Hold != tc.hold || math.Abs(snap.Rate-10/tc.hold) > 1e-3 {
				t.Fatalf("snapshot %+v slots %+v %v, want hold %v", snap, snap.Slots, err, tc.hold)
			}
		})
	}
}

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
			after: func(t *testing.T, rdb redis.UniversalClient, e *Engine, name string, s Session) {
				setSessionExpiry(t, rdb, name, s.ID, clockOf(t, e).Now().Add(-time.Second))
			}},
		{name: "same id after the sweep took the idle session", want: ErrTokenUsed,
			after: func(t *testing.T, rdb redis.UniversalClient, e *Engine, name string, s Session) {
				setSessionExpiry(t, rdb, name, s.ID, clockOf(t, e).Now().Add(-time.Second))
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

// TestOpenSessionAfterLapse: a redeem whose second script runs after the
// pass expired, or after its claim lapsed (a stalled instance), opens no
// session and releases the pass.
func TestOpenSessionAfterLapse(t *testing.T) {
	cases := []struct {
		name     string
		passLeft time.Duration // 0: leave the pass's expiry alone
		claimTTL time.Duration
	}{
		{"pass expired", 300 * time.Millisecond, RedeemClaimTTL},
		{"claim lapsed", 0, 200 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rdb := gateRedis(t)
			e, name := gateRoom(t, rdb, nil)
			ctx := context.Background()
			vs, toks := gateAdmitted(t, e, name, 1)
			v, tok := vs[0], toks[0]
			jti := newID(t)
			if _, err := e.MintPass(ctx, name, v, tok, jti); err != nil {
				t.Fatal(err)
			}
			k := testKeys(rdb, name).key("tokens")
			if c.passLeft > 0 {
				f := strings.Fields(rdb.HGet(ctx, k, v).Val())
				f[3] = strconv.FormatInt(clockOf(t, e).Now().Add(c.passLeft).UnixMilli(), 10)
				rdb.HSet(ctx, k, v, strings.Join(f, " "))
			}
			cl, err := e.Claim(ctx, name, v, tok, c.claimTTL) // Redeem's first script
			if err != nil {
				t.Fatal(err)
			}
			clockOf(t, e).Advance(cl.TTL + 100*time.Millisecond) // the instance stalls
			res, err := e.run(ctx, e.s.openSession, name, v, cl.Holder, jti, newID(t), "sub").Slice()
			if err != nil {
				t.Fatal(err)
			}
			if got := asInt(res[0]); got != 0 {
				t.Errorf("open_session after the lapse: %v, want {0}", res)
			}
			if f := strings.Fields(rdb.HGet(ctx, k, v).Val()); len(f) < 2 || f[1] != "R" {
				t.Errorf("pass left as %v, want released (R)", f)
			}
			if n, err := e.ActiveSessions(ctx, name); err != nil || n != 0 {
				t.Errorf("%d sessions (%v), want 0", n, err)
			}
		})
	}
}

// TestRedeemTakenSessionID: a session id already in use is a typed error
// (answered "in use"), not an internal one.
func TestRedeemTakenSessionID(t *testing.T) {
	rdb := gateRedis(t)
	e, name := gateRoom(t, rdb, nil)
	ctx := context.Background()
	vs, toks := gateAdmitted(t, e, name, 1)
	jti, sid := newID(t), newID(t)
	if _, err := e.MintPass(ctx, name, vs[0], toks[0], jti); err != nil {
		t.Fatal(err)
	}
	rdb.HSet(ctx, testKeys(rdb, name).key("sessions"), sid, "1 1 someone")
	_, err := e.Redeem(ctx, name, jti, sid)
	var we *WaitError
	if !errors.As(err, &we) || !errors.Is(err, ErrTokenInUse) {
		t.Fatalf("redeem with a taken session id: %v, want a *WaitError{ErrTokenInUse}", err)
	}
	if _, err := e.Redeem(ctx, name, jti, newID(t)); err != nil {
		t.Errorf("a retry with a fresh id: %v", err)
	}
}

// TestStaleMembersBounded: past STALE_SAMPLE stale members the split of
// passes and sessions is estimated from the oldest (the scan is bounded);
// the total stays exact.
func TestStaleMembersBounded(t *testing.T) {
	cases := []struct{ passes, sessions int }{
		{3, 2},
		{1500, 500},
		{0, 2500},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d passes %d sessions", c.passes, c.sessions), func(t *testing.T) {
			rdb := gateRedis(t)
			e, name := gateRoom(t, rdb, nil)
			ctx := context.Background()
			kk := testKeys(rdb, name)
			old := float64(clockOf(t, e).Now().Add(-time.Minute).UnixMilli())
			var zs []redis.Z
			sessions := map[string]any{}
			// Expiries interleave passes and sessions, as they do in a room.
			n := c.passes + c.sessions
			for i := 0; i < c.passes; i++ {
				zs = append(zs, redis.Z{Score: old + float64(i*n/c.passes), Member: fmt.Sprintf("p%06d", i)})
			}
			for i := 0; i < c.sessions; i++ {
				id := fmt.Sprintf("sess%06d", i)
				zs = append(zs, redis.Z{Score: old + float64(i*n/c.sessions), Member: "s:" + id})
				sessions[id] = "1 1 sub"
			}
			if err := rdb.ZAdd(ctx, kk.key("active"), zs...).Err(); err != nil {
				t.Fatal(err)
			}
			if len(sessions) > 0 {
				rdb.HSet(ctx, kk.key("sessions"), sessions)
			}
			st, err := e.Stats(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			tol := int64(0)
			if c.passes+c.sessions > 1000 {
				tol = int64(c.passes+c.sessions) / 10
			}
			if d := st.SessionsIdle - int64(c.sessions); d < -tol || d > tol {
				t.Errorf("sessionsIdle %d, want %d ± %d", st.SessionsIdle, c.sessions, tol)
			}
			if got := st.Expired + st.SessionsIdle; got != int64(c.passes+c.sessions) {
				t.Errorf("expired %d + idle %d, want %d", st.Expired, st.SessionsIdle, c.passes+c.sessions)
			}
		})
	}
}
