package queue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

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
				f[3] = strconv.FormatInt(time.Now().Add(c.passLeft).UnixMilli(), 10)
				rdb.HSet(ctx, k, v, strings.Join(f, " "))
			}
			cl, err := e.Claim(ctx, name, v, tok, c.claimTTL) // Redeem's first script
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(cl.TTL + 100*time.Millisecond) // the instance stalls
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
			old := float64(time.Now().Add(-time.Minute).UnixMilli())
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
