package queue

import (
	"context"
	"errors"
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
	time.Sleep(80 * time.Millisecond) // the first holder "crashed"
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
