package queue

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"math"
	"reflect"
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
func gateRoom(t *testing.T, rdb redis.UniversalClient, mut func(*room.Settings)) (*Engine, string) {
	t.Helper()
	name := servicetest.RoomName(t, rdb)
	e := New(rdb, DefaultNamespace(rdb))
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
			time.Sleep(5 * time.Millisecond)
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

// TestSessionModes: an idle session is renewed by activity and ends
// sessionSeconds after the last; a fixed one is never renewed. The
// session's expiry is moved instead of waiting for it.
func TestSessionModes(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	for _, mode := range []string{room.SessionIdle, room.SessionFixed} {
		t.Run(mode, func(t *testing.T) {
			e, name := gateRoom(t, rdb, func(s *room.Settings) { s.SessionSeconds, s.SessionMode = 30, mode })
			_, s := redeemed(t, e, name)
			if s.Mode != mode || s.IdleSeconds != 30 || s.Expires.Sub(s.Started) != 30*time.Second {
				t.Fatalf("session %+v", s)
			}
			soon := time.Now().Add(5 * time.Second).Truncate(time.Millisecond)
			setSessionExpiry(t, rdb, name, s.ID, soon)
			got, err := e.TouchSession(ctx, name, s.ID, true)
			if err != nil {
				t.Fatal(err)
			}
			renewed := got.Expires.After(time.Now().Add(25 * time.Second))
			if mode == room.SessionIdle && !renewed {
				t.Fatalf("an idle session was not renewed: expires %v", got.Expires)
			}
			if mode == room.SessionFixed && !got.Expires.Equal(soon) {
				t.Fatalf("a fixed session moved from %v to %v", soon, got.Expires)
			}
			// Without renew, nothing moves.
			if again, _ := e.TouchSession(ctx, name, s.ID, false); !again.Expires.Equal(got.Expires) {
				t.Fatalf("a touch without renew moved %v to %v", got.Expires, again.Expires)
			}
			// sessionSeconds without activity: the next tick ends it as idle.
			setSessionExpiry(t, rdb, name, s.ID, time.Now().Add(-time.Millisecond))
			if st, _ := e.Stats(ctx, name); st.Sessions != 0 || st.SessionsIdle != 1 || st.Expired != 0 {
				t.Fatalf("stats before the sweep %+v", st)
			}
			if n, _ := e.ActiveSessions(ctx, name); n != 0 {
				t.Fatalf("%d live sessions past their expiry", n)
			}
			a, err := e.Admit(ctx, name, time.Second, nil)
			if err != nil || a.Sessions != (SessionCounts{Opened: 1, Idle: 1}) || a.Departures.Expired != 0 {
				t.Fatalf("the sweeping tick: %+v %v", a, err)
			}
			if st, _ := e.Stats(ctx, name); st.Sessions != 0 || st.SessionsIdle != 1 || st.Active != 0 || st.Expired != 0 {
				t.Fatalf("stats after the sweep %+v", st)
			}
			if n := rdb.HLen(ctx, testKeys(rdb, name).key("sessions")).Val(); n != 0 {
				t.Fatalf("%d session records after the sweep", n)
			}
			if _, err := e.TouchSession(ctx, name, s.ID, true); !errors.Is(err, ErrSessionGone) {
				t.Fatalf("touch of an idle session: %v", err)
			}
		})
	}
}

// TestTouchEndsAnExpiredSession: a session past its expiry is gone to a
// touch even before the sweep, and counts as idle once.
func TestTouchEndsAnExpiredSession(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	e, name := gateRoom(t, rdb, nil)
	_, s := redeemed(t, e, name)
	setSessionExpiry(t, rdb, name, s.ID, time.Now().Add(-time.Millisecond))
	if _, err := e.TouchSession(ctx, name, s.ID, true); !errors.Is(err, ErrSessionGone) {
		t.Fatalf("touch: %v", err)
	}
	if _, err := e.Admit(ctx, name, time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.Stats(ctx, name); st.SessionsIdle != 1 || st.SessionsEnded != 0 || st.Active != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestEndedSessionFreesItsSlot: with maxActive 1, a session holds the
// slot; its end lets exactly one more in, and the ETA's mean hold is the
// session's real hold, not the pass TTL.
func TestEndedSessionFreesItsSlot(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	e, name := gateRoom(t, rdb, func(s *room.Settings) { s.MaxActive = 1 })
	vs := visitors(t, 3)
	for _, v := range vs {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	if a := admitAfter(t, e, name, 20*time.Millisecond, time.Second, 3); len(a.Visitors) != 1 || a.Visitors[0] != vs[0] {
		t.Fatalf("admitted %v", a.Visitors)
	}
	p, _ := e.Position(ctx, name, vs[0])
	jti := newID(t)
	if _, err := e.MintPass(ctx, name, vs[0], *p.EntryToken, jti); err != nil {
		t.Fatal(err)
	}
	s, err := e.Redeem(ctx, name, jti, newID(t))
	if err != nil {
		t.Fatal(err)
	}
	if a := admitAfter(t, e, name, 20*time.Millisecond, time.Second, 3); len(a.Visitors) != 0 || a.Active != 1 ||
		a.Sessions != (SessionCounts{Live: 1, Opened: 1}) {
		t.Fatalf("admitted %v (active %d) while the session holds the only slot", a.Visitors, a.Active)
	}
	time.Sleep(300 * time.Millisecond)
	if err := e.EndSession(ctx, name, s.ID); err != nil {
		t.Fatal(err)
	}
	if a := admitAfter(t, e, name, 20*time.Millisecond, time.Second, 3); len(a.Visitors) != 1 || a.Visitors[0] != vs[1] {
		t.Fatalf("after the end admitted %v, want only the second visitor", a.Visitors)
	}
	hold, err := rdb.HGet(ctx, testKeys(rdb, name).key("rate"), "hold").Float64()
	if err != nil || hold < 0.3 || hold > 2 {
		t.Fatalf("mean hold %v s (%v), want the session's ~0.4 s", hold, err)
	}
	// The slot schedule that waiting pages read follows it.
	snap, err := e.Snapshot(ctx, name)
	if err != nil || snap.Slots == nil || math.Abs(snap.Slots.Hold-hold) > 0.001 {
		t.Fatalf("snapshot slots %+v %v", snap.Slots, err)
	}
}

// TestMaxActiveUnderSessionChurn: 3 instances admit, redeem and end
// sessions at once; the live members of the active set never exceed
// maxActive.
func TestMaxActiveUnderSessionChurn(t *testing.T) {
	const maxActive, buyers = 4, 60
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rdb := gateRedis(t)
	e0, name := gateRoom(t, rdb, func(s *room.Settings) { s.Rate, s.MaxActive = 500, maxActive })
	engines := []*Engine{e0, New(gateRedis(t), e0.Namespace()), New(gateRedis(t), e0.Namespace())}
	for _, v := range visitors(t, buyers) {
		if _, err := e0.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	var peak, samples atomic.Int64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		key := testKeys(rdb, name).key("active")
		for {
			select {
			case <-stop:
				return
			default:
			}
			now := time.Now().UnixMilli()
			n, err := rdb.ZCount(ctx, key, "("+strconv.FormatInt(now, 10), "+inf").Result()
			if err != nil {
				return
			}
			samples.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
		}
	})
	var ended atomic.Int64
	var wg sync.WaitGroup
	for i, e := range engines {
		wg.Go(func() {
			for ended.Load() < buyers && ctx.Err() == nil {
				a, err := e.Admit(ctx, name, 20*time.Millisecond, tokens(t, 20))
				if err != nil {
					t.Error(err)
					return
				}
				for j, v := range a.Visitors {
					wg.Go(func() {
						p, err := e.Position(ctx, name, v)
						if err != nil || p.EntryToken == nil {
							t.Errorf("position %+v %v", p, err)
							return
						}
						jti := newID(t)
						if _, err := e.MintPass(ctx, name, v, *p.EntryToken, jti); err != nil {
							t.Error(err)
							return
						}
						other := engines[(i+j+1)%3] // the shop's call reaches another instance
						s, err := other.Redeem(ctx, name, jti, newID(t))
						if err != nil {
							t.Error(err)
							return
						}
						time.Sleep(time.Duration(5+(i*7+j*13)%30) * time.Millisecond)
						if _, err := e.TouchSession(ctx, name, s.ID, true); err != nil {
							t.Error(err)
						}
						if err := engines[(i+j+2)%3].EndSession(ctx, name, s.ID); err != nil {
							t.Error(err)
						}
						ended.Add(1)
					})
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	close(stop)
	sampler.Wait()
	if ended.Load() != buyers {
		t.Fatalf("%d of %d sessions ended", ended.Load(), buyers)
	}
	if peak.Load() > maxActive || peak.Load() < 2 || samples.Load() < 100 {
		t.Fatalf("peak %d live slots over %d samples, maxActive %d", peak.Load(), samples.Load(), maxActive)
	}
	st, _ := e0.Stats(ctx, name)
	if st.SessionsOpened != buyers || st.SessionsEnded != buyers || st.Sessions != 0 || st.Active != 0 || st.Admitted != buyers {
		t.Fatalf("stats %+v", st)
	}
	t.Logf("peak %d of %d over %d samples", peak.Load(), maxActive, samples.Load())
}

// TestGateSettingsRoundTrip: the gate is saved with the room, read back
// whole, and its session fields are plain fields for the scripts.
func TestGateSettingsRoundTrip(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	for _, tc := range []struct {
		name         string
		gate         room.Gate
		plainSeconds string
		plainMode    string
	}{
		{"set", room.Gate{TargetURL: "https://shop.example/buy", SessionSeconds: 90, SessionMode: room.SessionFixed, FailOpen: true,
			Protect: []string{"/checkout", "/cart"}, APIKeyHash: strings.Repeat("a", 64)}, "90", "fixed"},
		{"zero values", room.Gate{}, "600", "idle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, name := gateRoom(t, rdb, func(s *room.Settings) { s.Gate = tc.gate })
			got, err := e.Room(ctx, name)
			if err != nil || !reflect.DeepEqual(got.Gate, tc.gate) {
				t.Fatalf("read back %+v %v, want %+v", got.Gate, err, tc.gate)
			}
			all, err := e.RoomsSettings(ctx, []string{name})
			if err != nil || !reflect.DeepEqual(all[name], got) {
				t.Fatalf("RoomsSettings %+v %v", all[name], err)
			}
			cfg := testKeys(rdb, name).key("cfg")
			if f := rdb.HMGet(ctx, cfg, "sessionSeconds", "sessionMode").Val(); f[0] != tc.plainSeconds || f[1] != tc.plainMode {
				t.Fatalf("plain fields %v", f)
			}
		})
	}
	t.Run("a room saved before the gate", func(t *testing.T) {
		e, name := gateRoom(t, rdb, nil)
		rdb.HDel(ctx, testKeys(rdb, name).key("cfg"), "gate", "sessionSeconds", "sessionMode")
		got, err := e.Room(ctx, name)
		if err != nil || !reflect.DeepEqual(got.Gate, room.DefaultGate()) {
			t.Fatalf("%+v %v", got.Gate, err)
		}
		// Its sessions take the defaults.
		_, s := redeemed(t, e, name)
		if s.IdleSeconds != room.DefaultSessionSeconds || s.Mode != room.SessionIdle {
			t.Fatalf("session %+v", s)
		}
	})
}

// TestDeleteRoomTakesTheGateKeys: a deleted room keeps no pass ids and no
// sessions.
func TestDeleteRoomTakesTheGateKeys(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	e, name := gateRoom(t, rdb, nil)
	redeemed(t, e, name)
	vs, toks := gateAdmitted(t, e, name, 1)
	if _, err := e.MintPass(ctx, name, vs[0], toks[0], newID(t)); err != nil {
		t.Fatal(err)
	}
	k := testKeys(rdb, name)
	if n := rdb.Exists(ctx, k.key("jtis"), k.key("jtiof"), k.key("sessions")).Val(); n != 3 {
		t.Fatalf("%d of the 3 gate keys before the delete", n)
	}
	if _, err := e.DeleteRoom(ctx, name); err != nil {
		t.Fatal(err)
	}
	if n := roomKeyCount(t, rdb, name); n != 0 {
		t.Fatalf("%d keys after the delete", n)
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
