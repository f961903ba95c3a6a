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
			switch err := e.Claim(ctx, name, v, tok, time.Minute); {
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
	steps := []struct {
		name string
		do   func() error
		want error
	}{
		{"release before claim", func() error { return e.Release(ctx, name, v, tok) }, ErrTokenNotClaimed},
		{"claim by another visitor", func() error { return e.Claim(ctx, name, other, tok, 0) }, ErrTokenInvalid},
		{"claim with a forged token", func() error { return e.Claim(ctx, name, v, forged, 0) }, ErrTokenInvalid},
		{"claim with a malformed token", func() error { return e.Claim(ctx, name, v, "nope", 0) }, ErrTokenInvalid},
		{"claim", func() error { return e.Claim(ctx, name, v, tok, time.Minute) }, nil},
		{"second claim", func() error { return e.Claim(ctx, name, v, tok, time.Minute) }, ErrTokenInUse},
		{"release (rollback)", func() error { return e.Release(ctx, name, v, tok) }, nil},
		{"claim again (retry)", func() error { return e.Claim(ctx, name, v, tok, time.Minute) }, nil},
		{"consume with a forged token", func() error { return e.Consume(ctx, name, v, forged) }, ErrTokenInvalid},
		{"consume (commit)", func() error { return e.Consume(ctx, name, v, tok) }, nil},
		{"claim after consume", func() error { return e.Claim(ctx, name, v, tok, time.Minute) }, ErrTokenInvalid},
		{"consume twice", func() error { return e.Consume(ctx, name, v, tok) }, ErrTokenInvalid},
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
	if err := e.Claim(ctx, name, v, tok, 40*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := e.Claim(ctx, name, v, tok, time.Minute); !errors.Is(err, ErrTokenInUse) {
		t.Fatalf("live claim retaken: %v", err)
	}
	time.Sleep(80 * time.Millisecond) // the first holder "crashed"
	if err := e.Claim(ctx, name, v, tok, time.Minute); err != nil {
		t.Fatalf("stale claim not retaken: %v", err)
	}
}

func TestMalformedTokenNeedsNoRedis(t *testing.T) {
	// A client to a closed port: any round trip would fail with a
	// connection error rather than ErrTokenInvalid.
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer dead.Close()
	e := New(dead)
	ctx := context.Background()
	for _, bad := range []string{"", "short", "0123456789012345678901234567890123456789012=", "../../../../etc/passwd"} {
		if err := e.Claim(ctx, "demo", "AAAAAAAAAAAAAAAAAAAAAA", bad, 0); !errors.Is(err, ErrTokenInvalid) {
			t.Fatalf("claim %q: %v, want ErrTokenInvalid without a round trip", bad, err)
		}
	}
	// A well-formed token does need Redis: the error is a connection error.
	good := tokens(t, 1)[0]
	if err := e.Claim(ctx, "demo", "AAAAAAAAAAAAAAAAAAAAAA", good, 0); err == nil || errors.Is(err, ErrTokenInvalid) {
		t.Fatalf("claim with Redis down: %v, want a connection error (fail closed)", err)
	}
}
