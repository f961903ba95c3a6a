package queue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// proof returns a fresh proof of work as package challenge would verify
// it: the engine records proofs, it does not check them.
func proof(t *testing.T) Proof {
	t.Helper()
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return Proof{ID: hex.EncodeToString(b[:]), Expires: time.Now().Add(2 * time.Minute)}
}

func challengeRoom(t *testing.T, mode string, mut func(*room.Settings)) (*Engine, string) {
	t.Helper()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) {
		s.Challenge = mode
		if mut != nil {
			mut(s)
		}
	}))
	return e, name
}

func TestEnterWithProof(t *testing.T) {
	ctx := context.Background()
	e, name := challengeRoom(t, room.ChallengeAuto, nil)
	vs := visitors(t, 3)

	if _, err := e.EnterFrom(ctx, name, vs[0], "", Campaign{}); !errors.Is(err, ErrChallengeRequired) {
		t.Fatalf("enter without a proof: %v, want ErrChallengeRequired", err)
	}
	if p, err := e.Position(ctx, name, vs[0]); err != nil || p.Status != StatusNotEntered {
		t.Fatalf("after a refused enter: %+v %v, want NOT_ENTERED", p, err)
	}
	pr := proof(t)
	first, err := e.EnterWithProof(ctx, name, vs[0], "", Campaign{}, pr)
	if err != nil || first.Status != StatusWaiting || !first.Proved {
		t.Fatalf("enter with a proof: %+v %v", first, err)
	}
	// A visitor with a place comes back without a proof, or with the same.
	for _, p := range []Proof{{}, pr} {
		again, err := e.EnterWithProof(ctx, name, vs[0], "", Campaign{}, p)
		if err != nil || again.Ticket != first.Ticket || again.Proved {
			t.Fatalf("re-enter with %+v: %+v %v, want ticket %d", p, again, err, first.Ticket)
		}
	}
	if _, err := e.EnterWithProof(ctx, name, vs[1], "", Campaign{}, pr); !errors.Is(err, ErrChallengeUsed) {
		t.Fatalf("another visitor with the used proof: %v, want ErrChallengeUsed", err)
	}
	if _, err := e.EnterWithProof(ctx, name, vs[1], "", Campaign{}, proof(t)); err != nil {
		t.Fatalf("another visitor with a fresh proof: %v", err)
	}

	// Having left, the visitor needs a new proof; the old one stays used.
	if _, err := e.Leave(ctx, name, vs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EnterFrom(ctx, name, vs[0], "", Campaign{}); !errors.Is(err, ErrChallengeRequired) {
		t.Fatalf("re-join after leaving without a proof: %v", err)
	}
	if _, err := e.EnterWithProof(ctx, name, vs[0], "", Campaign{}, pr); !errors.Is(err, ErrChallengeUsed) {
		t.Fatalf("re-join after leaving with the old proof: %v", err)
	}
	if _, err := e.EnterWithProof(ctx, name, vs[0], "", Campaign{}, proof(t)); err != nil {
		t.Fatalf("re-join after leaving with a new proof: %v", err)
	}
	if st, err := e.Stats(ctx, name); err != nil || st.Issued != 3 {
		t.Fatalf("stats %+v %v: want 3 tickets", st, err)
	}
}

func TestEnterWithProofAfterAdmission(t *testing.T) {
	ctx := context.Background()
	e, name := challengeRoom(t, room.ChallengeAlways, nil)
	v := visitors(t, 1)[0]
	if _, err := e.EnterWithProof(ctx, name, v, "", Campaign{}, proof(t)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if a, err := e.Admit(ctx, name, time.Second, tokens(t, 1)); err != nil || len(a.Visitors) != 1 {
		t.Fatalf("admit: %+v %v", a, err)
	}
	// Holding a pass, the visitor is READY without a proof.
	if p, err := e.EnterFrom(ctx, name, v, "", Campaign{}); err != nil || p.Status != StatusReady {
		t.Fatalf("enter while READY: %+v %v", p, err)
	}
	// Once the pass is given up, joining again is a new identity.
	if _, err := e.Leave(ctx, name, v); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EnterFrom(ctx, name, v, "", Campaign{}); !errors.Is(err, ErrChallengeRequired) {
		t.Fatalf("re-join after admission: %v, want ErrChallengeRequired", err)
	}
}

func TestEnterWithProofPrequeue(t *testing.T) {
	ctx := context.Background()
	e, name := challengeRoom(t, room.ChallengeAuto, func(s *room.Settings) {
		s.PrequeueAt, s.OpensAt = at(-time.Hour), at(time.Hour)
	})
	vs := visitors(t, 2)
	if _, err := e.EnterFrom(ctx, name, vs[0], "198.51.100.0/24", Campaign{}); !errors.Is(err, ErrChallengeRequired) {
		t.Fatalf("pre-queue entry without a proof: %v", err)
	}
	pr := proof(t)
	p, err := e.EnterWithProof(ctx, name, vs[0], "198.51.100.0/24", Campaign{}, pr)
	if err != nil || p.Status != StatusPrequeued {
		t.Fatalf("pre-queue entry with a proof: %+v %v", p, err)
	}
	if _, err := e.EnterWithProof(ctx, name, vs[1], "198.51.100.0/24", Campaign{}, pr); !errors.Is(err, ErrChallengeUsed) {
		t.Fatalf("pre-queue entry with a used proof: %v", err)
	}
	if again, err := e.EnterFrom(ctx, name, vs[0], "198.51.100.0/24", Campaign{}); err != nil || again.Ticket != p.Ticket {
		t.Fatalf("pre-queued visitor again: %+v %v", again, err)
	}
	if nets, err := e.Networks(ctx, name, 10); err != nil || len(nets) != 1 || nets[0].Entries != 1 {
		t.Fatalf("networks %+v %v: want one entry (refused enters count none)", nets, err)
	}
}

func TestEnterOffNeedsNoProof(t *testing.T) {
	for _, mode := range []string{room.ChallengeOff, ""} {
		e, name := challengeRoom(t, mode, nil)
		if _, err := e.EnterFrom(context.Background(), name, visitors(t, 1)[0], "", Campaign{}); err != nil {
			t.Errorf("challenge %q: enter without a proof: %v", mode, err)
		}
	}
}

// TestEnterWithProofConcurrent: one proof, sent at once by 50 visitors,
// makes exactly one place.
func TestEnterWithProofConcurrent(t *testing.T) {
	ctx := context.Background()
	e, name := challengeRoom(t, room.ChallengeAuto, nil)
	pr := proof(t)
	var ok, used atomic.Int32
	var wg sync.WaitGroup
	for _, v := range visitors(t, 50) {
		wg.Go(func() {
			_, err := e.EnterWithProof(ctx, name, v, "", Campaign{}, pr)
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrChallengeUsed):
				used.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || used.Load() != 49 {
		t.Fatalf("%d places and %d refusals, want 1 and 49", ok.Load(), used.Load())
	}
	if st, _ := e.Stats(ctx, name); st.Issued != 1 {
		t.Fatalf("%d tickets issued, want 1", st.Issued)
	}
}

func TestCountChallenge(t *testing.T) {
	ctx := context.Background()
	e, name := challengeRoom(t, room.ChallengeAuto, nil)
	var last ChallengeRates
	for range 20 {
		r, err := e.CountChallenge(ctx, name, "203.0.113.0/24")
		if err != nil {
			t.Fatal(err)
		}
		last = r
	}
	other, err := e.CountChallenge(ctx, name, "2001:db8::/64")
	if err != nil {
		t.Fatal(err)
	}
	// 20 in the window of 10 s: 2/s (a little less when the fixed window
	// turned meanwhile); the other network made one.
	if last.Mode != room.ChallengeAuto || last.Network < 1.9 || last.Network > 2.01 {
		t.Errorf("busy network: %+v, want auto at 2/s", last)
	}
	if other.Network < 0.09 || other.Network > 0.11 || other.Room < 2 || other.Room > 2.11 {
		t.Errorf("other network: %+v, want 0.1/s of 2.1/s in the room", other)
	}
	unknown, _ := e.CountChallenge(ctx, name, "")
	if unknown.Network != 0 || unknown.Room < 2.1 {
		t.Errorf("unknown network: %+v, want none of its own, counted for the room", unknown)
	}

	// Enter with a proof, then delete: no challenge key outlives its room.
	if _, err := e.EnterWithProof(ctx, name, visitors(t, 1)[0], "", Campaign{}, proof(t)); err != nil {
		t.Fatal(err)
	}
	rdb := servicetest.Redis(t)
	if _, err := e.DeleteRoom(ctx, name); err != nil {
		t.Fatal(err)
	}
	k := testKeys(rdb, name)
	if n, _ := rdb.Exists(ctx, k.key("powcur"), k.key("powprev"), k.key("powused")).Result(); n != 0 {
		t.Errorf("%d challenge keys outlive their room", n)
	}
	if _, err := e.CountChallenge(ctx, name, ""); !errors.Is(err, room.ErrNotFound) {
		t.Errorf("count in a deleted room: %v, want room.ErrNotFound", err)
	}

	off, offName := challengeRoom(t, room.ChallengeOff, nil)
	if r, err := off.CountChallenge(ctx, offName, "203.0.113.0/24"); err != nil || r.Mode != room.ChallengeOff || r.Room != 0 {
		t.Errorf("count in a room without challenge: %+v %v", r, err)
	}
}

// TestChallengeOnTheEmbeddedRedis: the challenge's count and the proof's
// record work on the embedded Redis of `make run`.
func TestChallengeOnTheEmbeddedRedis(t *testing.T) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	e := New(rdb, DefaultNamespace(rdb))
	set := room.Defaults("demo")
	set.Challenge = room.ChallengeAuto
	if err := e.SaveRoom(ctx, "demo", set); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		r, err := e.CountChallenge(ctx, "demo", "203.0.113.0/24")
		if err != nil || r.Mode != room.ChallengeAuto || r.Network < float64(i+1)/10-0.01 {
			t.Fatalf("count %d: %+v %v", i, r, err)
		}
	}
	vs := visitors(t, 2)
	if _, err := e.EnterFrom(ctx, "demo", vs[0], "", Campaign{}); !errors.Is(err, ErrChallengeRequired) {
		t.Fatalf("enter without a proof: %v", err)
	}
	pr := proof(t)
	if p, err := e.EnterWithProof(ctx, "demo", vs[0], "", Campaign{}, pr); err != nil || !p.Proved {
		t.Fatalf("enter with a proof: %+v %v", p, err)
	}
	if _, err := e.EnterWithProof(ctx, "demo", vs[1], "", Campaign{}, pr); !errors.Is(err, ErrChallengeUsed) {
		t.Fatalf("a replay: %v", err)
	}
}

// TestEnterAfterLapseNeedsNoProof: a visitor who went away too long and
// enters again goes to the end of the line without a new proof: their
// identity was paid for, and they take no second place.
func TestEnterAfterLapseNeedsNoProof(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) {
		s.Challenge = room.ChallengeAuto
		s.AbandonAfterSeconds, s.ReturnWithinSeconds = 60, 60
	}))
	vs := visitors(t, 2)
	for _, v := range vs {
		if _, err := e.EnterWithProof(ctx, name, v, "", Campaign{}, proof(t)); err != nil {
			t.Fatal(err)
		}
	}
	lastSeen(t, rdb, name, 1, 90*time.Second)
	p, err := e.EnterFrom(ctx, name, vs[0], "", Campaign{})
	if err != nil || p.Ticket != 3 || p.RankUpReason != RankUpReturned || p.Proved {
		t.Fatalf("a lapsed visitor enters again: %+v %v, want ticket 3 at the end without a proof", p, err)
	}
	if st, _ := e.Stats(ctx, name); st.Waiting != 2 {
		t.Fatalf("%d waiting, want 2: the lapsed visitor holds one place", st.Waiting)
	}
}
