package queue

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
)

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
	time.Sleep(time.Until(time.UnixMilli(expiry)) + 50*time.Millisecond)
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
	time.Sleep(80 * time.Millisecond) // the first attempt froze past its claim
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
	time.Sleep(wait.RetryAfter + 20*time.Millisecond)
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
