package queue

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"waitingroom/server/room"
)

// admitted returns a room with one admitted visitor and their token.
func admitted(t *testing.T) (*Engine, string, string, string) {
	t.Helper()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000 }))
	v := visitors(t, 1)[0]
	if _, err := e.Enter(context.Background(), name, v); err != nil {
		t.Fatal(err)
	}
	a := admitAfter(t, e, name, 20*time.Millisecond, time.Second, 1)
	if len(a.Visitors) != 1 {
		t.Fatalf("admitted %v", a.Visitors)
	}
	p, err := e.Position(context.Background(), name, v)
	if err != nil || p.EntryToken == nil {
		t.Fatalf("position of the admitted visitor: %+v %v", p, err)
	}
	return e, name, v, *p.EntryToken
}

func TestConcurrentClaimsGiveOneSuccess(t *testing.T) {
	e, name, v, tok := admitted(t)
	ctx := context.Background()
	var ok, inUse atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 100 {
		wg.Go(func() {
			<-start
			switch _, err := e.Claim(ctx, name, v, tok, time.Minute); {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrTokenInUse):
				inUse.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	if ok.Load() != 1 || inUse.Load() != 99 {
		t.Fatalf("100 concurrent claims: %d succeeded, %d in use; want 1 and 99", ok.Load(), inUse.Load())
	}
}

func TestTokenLifecycle(t *testing.T) {
	e, name, v, tok := admitted(t)
	ctx := context.Background()
	other := visitors(t, 1)[0]
	forged := "A" + tok[1:]
	if forged == tok {
		forged = "B" + tok[1:]
	}
	var c Claim
	claim := func(visitor, tok string) func() error {
		return func() error {
			got, err := e.Claim(ctx, name, visitor, tok, time.Minute)
			if err == nil {
				c = got
			}
			return err
		}
	}
	steps := []struct {
		name string
		do   func() error
		want error
	}{
		{"release before claim", func() error { return e.Release(ctx, name, v, "nobody", 0) }, ErrTokenNotClaimed},
		{"claim by another visitor", claim(other, tok), ErrTokenInvalid},
		{"claim with a forged token", claim(v, forged), ErrTokenInvalid},
		{"claim with a malformed token", claim(v, "nope"), ErrTokenInvalid},
		{"claim", claim(v, tok), nil},
		{"second claim", claim(v, tok), ErrTokenInUse},
		{"release by another holder", func() error { return e.Release(ctx, name, v, "someone-else", 0) }, ErrTokenNotClaimed},
		{"release (rollback)", func() error { return e.Release(ctx, name, v, c.Holder, 0) }, nil},
		{"release twice", func() error { return e.Release(ctx, name, v, c.Holder, 0) }, ErrTokenNotClaimed},
		{"claim again (retry)", claim(v, tok), nil},
		{"consume by another holder", func() error { return e.Consume(ctx, name, v, "someone-else") }, ErrTokenNotClaimed},
		{"consume (commit)", func() error { return e.Consume(ctx, name, v, c.Holder) }, nil},
		{"claim after consume", claim(v, tok), ErrTokenUsed},
		{"claim after consume with a forged token", claim(v, forged), ErrTokenInvalid},
		{"consume twice", func() error { return e.Consume(ctx, name, v, c.Holder) }, ErrTokenInvalid},
	}
	for _, st := range steps {
		if err := st.do(); !errors.Is(err, st.want) {
			t.Fatalf("%s: error %v, want %v", st.name, err, st.want)
		}
	}
	p, _ := e.Position(ctx, name, v)
	if p.Status != StatusNotEntered {
		t.Fatalf("after consume the visitor is %s, want NOT_ENTERED", p.Status)
	}
	st, _ := e.Stats(ctx, name)
	if st.Active != 0 || st.Consumed != 1 {
		t.Fatalf("after consume: active %d consumed %d, want 0 and 1", st.Active, st.Consumed)
	}
}

func TestStaleClaimCanBeRetaken(t *testing.T) {
	e, name, v, tok := admitted(t)
	ctx := context.Background()
	if _, err := e.Claim(ctx, name, v, tok, 40*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	_, err := e.Claim(ctx, name, v, tok, time.Minute)
	var wait *WaitError
	if !errors.Is(err, ErrTokenInUse) || !errors.As(err, &wait) || wait.RetryAfter <= 0 || wait.RetryAfter > 40*time.Millisecond {
		t.Fatalf("live claim retaken: %v, want ErrTokenInUse with the claim's remaining time", err)
	}
	clockOf(t, e).Advance(80 * time.Millisecond) // the first holder "crashed"
	if _, err := e.Claim(ctx, name, v, tok, time.Minute); err != nil {
		t.Fatalf("stale claim not retaken: %v", err)
	}
}

func TestMalformedTokenNeedsNoRedis(t *testing.T) {
	// A client to a closed port: any round trip would fail with a
	// connection error rather than ErrTokenInvalid.
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer dead.Close()
	e := New(dead, DefaultNamespace(dead))
	ctx := context.Background()
	for _, bad := range []string{"", "short", "0123456789012345678901234567890123456789012=", "../../../../etc/passwd"} {
		if _, err := e.Claim(ctx, "demo", "AAAAAAAAAAAAAAAAAAAAAA", bad, 0); !errors.Is(err, ErrTokenInvalid) {
			t.Fatalf("claim %q: %v, want ErrTokenInvalid without a round trip", bad, err)
		}
	}
	// A well-formed token does need Redis: the error is a connection error.
	good := tokens(t, 1)[0]
	if _, err := e.Claim(ctx, "demo", "AAAAAAAAAAAAAAAAAAAAAA", good, 0); err == nil || errors.Is(err, ErrTokenInvalid) {
		t.Fatalf("claim with Redis down: %v, want a connection error (fail closed)", err)
	}
}

// pass is a visitor's pass as lib.lua packs it in the room's tokens hash.
type pass struct {
	fields []string // token state ticket expiry claim holder fails paused
	expiry int64    // ms
}

func readPass(t *testing.T, rdb redis.UniversalClient, name, v string) pass {
	t.Helper()
	raw, err := rdb.HGet(context.Background(), testKeys(rdb, name).key("tokens"), v).Result()
	if err != nil {
		t.Fatalf("no pass for %s: %v", v, err)
	}
	f := strings.Fields(raw)
	if len(f) != 8 {
		t.Fatalf("pass %q is not 8 fields", raw)
	}
	x, _ := strconv.ParseInt(f[3], 10, 64)
	return pass{fields: f, expiry: x}
}

// agePass moves v's pass d into the past, as if d had gone by: its
// expiry, its claim deadline and its slot's expiry.
func agePass(t *testing.T, rdb redis.UniversalClient, name, v string, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	p := readPass(t, rdb, name, v)
	for _, i := range []int{3, 4} {
		if n, _ := strconv.ParseInt(p.fields[i], 10, 64); n > 0 {
			p.fields[i] = strconv.FormatInt(n-d.Milliseconds(), 10)
		}
	}
	k := testKeys(rdb, name)
	if err := rdb.HSet(ctx, k.key("tokens"), v, strings.Join(p.fields, " ")).Err(); err != nil {
		t.Fatal(err)
	}
	if s, err := rdb.ZScore(ctx, k.key("active"), v).Result(); err == nil {
		rdb.ZAdd(ctx, k.key("active"), redis.Z{Score: s - float64(d.Milliseconds()), Member: v})
	}
}

// TestClaimNeverExtendsThePass: a pass with 1 s left is claimed for 30 s.
// The claim ends with the pass, the slot keeps its expiry, and the pass is gone at
// its original time.
func TestClaimNeverExtendsThePass(t *testing.T) {
	e, name, v, tok := admitted(t)
	rdb := e.rdb
	ctx := context.Background()
	agePass(t, rdb, name, v, 299*time.Second) // 1 s left of 300
	expiry := readPass(t, rdb, name, v).expiry
	slot, _ := rdb.ZScore(ctx, testKeys(rdb, name).key("active"), v).Result()
	c, err := e.Claim(ctx, name, v, tok, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if c.TTL > time.Second {
		t.Fatalf("claim of %v on a pass with 1 s left", c.TTL)
	}
	if got := readPass(t, rdb, name, v).expiry; got != expiry {
		t.Fatalf("the claim moved the pass's expiry by %d ms", got-expiry)
	}
	if got, _ := rdb.ZScore(ctx, testKeys(rdb, name).key("active"), v).Result(); got != slot {
		t.Fatalf("the claim moved the slot's expiry by %.0f ms", got-slot)
	}
	if err := e.Release(ctx, name, v, c.Holder, 0); err != nil {
		t.Fatal(err)
	}
	clockOf(t, e).Advance(time.UnixMilli(expiry).Sub(clockOf(t, e).Now()) + 50*time.Millisecond)
	if _, err := e.Claim(ctx, name, v, tok, 30*time.Second); !errors.Is(err, ErrTokenInvalid) {
		t.Fatalf("claim after the pass's expiry: %v, want ErrTokenInvalid", err)
	}
	if p, _ := e.Position(ctx, name, v); p.Status != StatusNotEntered {
		t.Fatalf("after its expiry the pass still shows: %s", p.Status)
	}
}

// TestLateReleaseCannotUndoANewerClaim: an order frozen past its claim
// releases late, after a second attempt claimed the token. The release
// is refused: it must not put the token back to READY under the running
// second attempt, which would let a third in.
func TestLateReleaseCannotUndoANewerClaim(t *testing.T) {
	e, name, v, tok := admitted(t)
	ctx := context.Background()
	first, err := e.Claim(ctx, name, v, tok, 40*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	clockOf(t, e).Advance(80 * time.Millisecond) // the first attempt froze past its claim
	second, err := e.Claim(ctx, name, v, tok, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if first.Holder == second.Holder {
		t.Fatal("two claims got one holder id")
	}
	if err := e.Release(ctx, name, v, first.Holder, 0); !errors.Is(err, ErrTokenNotClaimed) {
		t.Fatalf("late release of the first claim: %v, want ErrTokenNotClaimed", err)
	}
	if err := e.Consume(ctx, name, v, first.Holder); !errors.Is(err, ErrTokenNotClaimed) {
		t.Fatalf("late consume of the first claim: %v, want ErrTokenNotClaimed", err)
	}
	if _, err := e.Claim(ctx, name, v, tok, time.Minute); !errors.Is(err, ErrTokenInUse) {
		t.Fatalf("third attempt while the second runs: %v, want ErrTokenInUse", err)
	}
	if err := e.Consume(ctx, name, v, second.Holder); err != nil {
		t.Fatalf("the second attempt's consume: %v", err)
	}
}

// TestFailuresPauseTheToken: the MaxFailedAttempts-th failed release
// pauses the token; a release that is not a failure does not count.
func TestFailuresPauseTheToken(t *testing.T) {
	e, name, v, tok := admitted(t)
	ctx := context.Background()
	const pause = 300 * time.Millisecond
	for i := range MaxFailedAttempts + 2 {
		c, err := e.Claim(ctx, name, v, tok, time.Minute)
		if err != nil {
			t.Fatalf("claim %d: %v", i+1, err)
		}
		failed := pause
		if i < 2 {
			failed = 0 // two rollbacks that are not the buyer's fault
		}
		err = e.Release(ctx, name, v, c.Holder, failed)
		if paused := i == MaxFailedAttempts+1; paused != errors.Is(err, ErrTokenPaused) {
			t.Fatalf("release %d: %v", i+1, err)
		}
	}
	_, err := e.Claim(ctx, name, v, tok, time.Minute)
	var wait *WaitError
	if !errors.As(err, &wait) || !errors.Is(err, ErrTokenPaused) || wait.RetryAfter <= 0 || wait.RetryAfter > pause {
		t.Fatalf("claim of a paused token: %v", err)
	}
	clockOf(t, e).Advance(wait.RetryAfter + 20*time.Millisecond)
	if _, err := e.Claim(ctx, name, v, tok, time.Minute); err != nil {
		t.Fatalf("claim after the pause: %v", err)
	}
}

// TestOrderSlotRefund: a refunded slot is back at once, never above the
// bucket's capacity.
func TestOrderSlotRefund(t *testing.T) {
	e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.OrderRate, s.OrderBurst = room.MinRate, 2 }))
	ctx := context.Background()
	for range 2 {
		if _, err := e.TakeOrderSlot(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.TakeOrderSlot(ctx, name); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("third slot of 2: %v", err)
	}
	for range 5 {
		if err := e.RefundOrderSlot(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		_, err := e.TakeOrderSlot(ctx, name)
		if want := i < 2; want != (err == nil) {
			t.Fatalf("slot %d after 5 refunds into a bucket of 2: %v", i+1, err)
		}
	}
}
