package queue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
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
	return Proof{ID: hex.EncodeToString(b[:]), Expires: time.Now().Add(2 * time.Minute), IssuedAt: time.Now()}
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
	clockOf(t, e).Advance(20 * time.Millisecond)
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
	// 20 in the window of 10 s: 2/s (a little less when the fixed window
	// turned meanwhile); challenges fetched without a join raise nobody's
	// room rate.
	if last.Mode != room.ChallengeAuto || last.Network < 1.9 || last.Network > 2.01 || last.Room != 0 {
		t.Errorf("busy network: %+v, want auto at 2/s, the room at 0", last)
	}
	// The room's rate counts the joins made with a proof.
	for _, v := range visitors(t, 3) {
		if _, err := e.EnterWithProof(ctx, name, v, "", Campaign{}, proof(t)); err != nil {
			t.Fatal(err)
		}
	}
	other, err := e.CountChallenge(ctx, name, "2001:db8::/64")
	if err != nil {
		t.Fatal(err)
	}
	if other.Network < 0.09 || other.Network > 0.11 || other.Room < 0.29 || other.Room > 0.31 {
		t.Errorf("other network: %+v, want 0.1/s, and 0.3/s proved joins in the room", other)
	}
	unknown, _ := e.CountChallenge(ctx, name, "")
	if unknown.Network != 0 || unknown.Room < 0.29 {
		t.Errorf("unknown network: %+v, want none of its own", unknown)
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

// TestCountChallengeNetworksBounded: past MaxChallengeNetworks networks in
// a window, a new network shares one count with the others that came
// late, and the hash grows no more.
func TestCountChallengeNetworksBounded(t *testing.T) {
	ctx := context.Background()
	e, name := challengeRoom(t, room.ChallengeAuto, nil)
	rdb := servicetest.Redis(t)
	// Every count below falls in one fixed window, as the engine's clock
	// stands still: a roll between them would move the filled hash to
	// powprev.
	if _, err := e.CountChallenge(ctx, name, "198.51.100.0/24"); err != nil {
		t.Fatal(err)
	}
	cur := testKeys(rdb, name).key("powcur")
	fields := make([]any, 0, 2*MaxChallengeNetworks)
	for i := range MaxChallengeNetworks {
		fields = append(fields, "nfill"+strconv.Itoa(i), 1)
	}
	if err := rdb.HSet(ctx, cur, fields...).Err(); err != nil {
		t.Fatal(err)
	}
	before, _ := rdb.HLen(ctx, cur).Result()
	var r ChallengeRates
	for i := range 5 {
		var err error
		if r, err = e.CountChallenge(ctx, name, "2001:db8:"+strconv.Itoa(i)+"::/64"); err != nil {
			t.Fatal(err)
		}
	}
	if after, _ := rdb.HLen(ctx, cur).Result(); after > before+1 {
		t.Errorf("the hash grew from %d to %d fields past the bound", before, after)
	}
	if r.Network < 0.49 {
		t.Errorf("the fifth late network: %+v, want the late networks' shared 0.5/s", r)
	}
	if known, _ := e.CountChallenge(ctx, name, "198.51.100.0/24"); known.Network < 0.19 || known.Network > 0.21 {
		t.Errorf("a network counted before the bound: %+v, want its own 0.2/s", known)
	}
}

// TestChallengeScheduled: before the pre-queue (or the opening) and after
// the closing, no challenge is counted (ErrNotOpen, ErrSaleEnded with the
// schedule), and a proof issued before the room's current phase began
// makes no place: banked before the opening, or in the pre-queue and
// spent after the opening.
func TestChallengeScheduled(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) {
		s.Challenge = room.ChallengeAuto
		s.PrequeueAt, s.OpensAt = at(time.Hour), at(2*time.Hour)
	}))
	r, err := e.CountChallenge(ctx, name, "203.0.113.0/24")
	if !errors.Is(err, ErrNotOpen) || r.Schedule.OpensAt == nil || r.Schedule.PrequeueAt == nil || r.Schedule.Phase != PhaseScheduled {
		t.Fatalf("count before the pre-queue: %+v %v, want ErrNotOpen with the schedule", r, err)
	}
	if n, _ := rdb.Exists(ctx, testKeys(rdb, name).key("powcur")).Result(); n != 0 {
		t.Error("a challenge was counted before the pre-queue")
	}
	setTimes := func(prequeue, opens time.Duration) {
		t.Helper()
		set, err := e.Room(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		set.PrequeueAt, set.OpensAt = at(prequeue), at(opens)
		if err := e.SaveRoom(ctx, name, set); err != nil {
			t.Fatal(err)
		}
	}
	banked := proof(t)
	banked.IssuedAt = time.Now().Add(-2 * time.Minute) // before the pre-queue
	setTimes(-time.Minute, time.Hour)
	vs := visitors(t, 3)
	if _, err := e.EnterWithProof(ctx, name, vs[0], "", Campaign{}, banked); !errors.Is(err, ErrChallengeStale) {
		t.Fatalf("pre-queue entry with a proof issued before it: %v, want ErrChallengeStale", err)
	}
	inPrequeue := proof(t)
	inPrequeue.IssuedAt = time.Now().Add(-30 * time.Second) // in the pre-queue
	if _, err := e.CountChallenge(ctx, name, "203.0.113.0/24"); err != nil {
		t.Fatalf("count in the pre-queue: %v", err)
	}
	setTimes(-time.Minute, -10*time.Second) // open (the draw of an empty pre-queue is done at once)
	if _, err := e.EnterWithProof(ctx, name, vs[1], "", Campaign{}, inPrequeue); !errors.Is(err, ErrChallengeStale) {
		t.Fatalf("enter after the opening with a proof of the pre-queue: %v, want ErrChallengeStale", err)
	}
	if p, err := e.EnterWithProof(ctx, name, vs[2], "", Campaign{}, proof(t)); err != nil || !p.Proved {
		t.Fatalf("enter after the opening with a proof issued after it: %+v %v", p, err)
	}

	setTimes(-2*time.Hour, -time.Hour)
	set, _ := e.Room(ctx, name)
	set.ClosesAt = at(-time.Minute)
	if err := e.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	if r, err := e.CountChallenge(ctx, name, "203.0.113.0/24"); !errors.Is(err, ErrSaleEnded) || r.Schedule.ClosesAt == nil {
		t.Fatalf("count after the closing: %+v %v, want ErrSaleEnded", r, err)
	}
}

// TestChallengeDefaultForOldRooms: a room saved before the challenge
// setting existed (no field) follows the engine's default.
func TestChallengeDefaultForOldRooms(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(nil))
	if err := rdb.HDel(ctx, testKeys(rdb, name).key("cfg"), "challenge").Err(); err != nil {
		t.Fatal(err)
	}
	vs := visitors(t, 2)
	if _, err := e.EnterFrom(ctx, name, vs[0], "", Campaign{}); err != nil {
		t.Fatalf("default off: enter without a proof: %v", err)
	}
	e.SetChallengeDefault(room.ChallengeAuto)
	if _, err := e.EnterFrom(ctx, name, vs[1], "", Campaign{}); !errors.Is(err, ErrChallengeRequired) {
		t.Fatalf("default auto: enter without a proof: %v, want ErrChallengeRequired", err)
	}
	if r, err := e.CountChallenge(ctx, name, "203.0.113.0/24"); err != nil || r.Mode != room.ChallengeAuto || r.Network == 0 {
		t.Fatalf("default auto: count %+v %v, want auto, counted", r, err)
	}
	if p, err := e.EnterWithProof(ctx, name, vs[1], "", Campaign{}, proof(t)); err != nil || !p.Proved {
		t.Fatalf("default auto: enter with a proof: %+v %v", p, err)
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
	lastSeen(t, e, rdb, name, 1, 90*time.Second)
	p, err := e.EnterFrom(ctx, name, vs[0], "", Campaign{})
	if err != nil || p.Ticket != 3 || p.RankUpReason != RankUpReturned || p.Proved {
		t.Fatalf("a lapsed visitor enters again: %+v %v, want ticket 3 at the end without a proof", p, err)
	}
	if st, _ := e.Stats(ctx, name); st.Waiting != 2 {
		t.Fatalf("%d waiting, want 2: the lapsed visitor holds one place", st.Waiting)
	}
}
