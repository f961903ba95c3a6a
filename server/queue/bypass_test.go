package queue

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"waitingroom/server/room"
)

// TestBypass: a bypass lets a visitor in at once with a pass of their
// own, counted apart from the line's admissions; the line, its rate and
// its head are untouched; maxActive's slots are never exceeded; a test
// link takes one use a pass, until its uses, its end or its revocation.
func TestBypass(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Rate, s.MaxActive, s.AbandonAfterSeconds = 2, 3, 0 }))
	clock := clockOf(t, e)
	vs := visitors(t, 8)
	// A line of three, waiting.
	for _, v := range vs[5:8] {
		if _, err := e.Enter(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	end := clock.Now().Add(time.Hour)
	if err := e.AddBypassLink(ctx, name, "link-1", 2, &end); err != nil {
		t.Fatal(err)
	}
	tok := tokens(t, 8)
	before, err := e.Stats(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name, visitor, link string
		advance             time.Duration
		want                error
		admitted            bool
	}{
		{"a staff network", vs[0], "", 0, nil, true},
		{"the same again: the pass held", vs[0], "", 0, nil, false},
		{"a test link", vs[1], "link-1", 0, nil, true},
		{"the link's second use: the last slot", vs[2], "link-1", 0, nil, true},
		{"every slot held", vs[3], "", 0, ErrRoomFull, false},
		{"the link used up", vs[3], "link-1", 0, ErrLinkUsedUp, false},
		{"no such link", vs[3], "link-2", 0, ErrLinkUnknown, false},
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		b, err := e.Bypass(ctx, name, s.visitor, tok[i], s.link)
		if !errors.Is(err, s.want) || b.Admitted != s.admitted {
			t.Fatalf("%s: %+v %v, want %v (admitted %v)", s.name, b, err, s.want, s.admitted)
		}
		if err == nil {
			p, err := e.Position(ctx, name, s.visitor)
			if err != nil || p.Status != StatusReady || p.EntryToken == nil {
				t.Fatalf("%s: position %+v %v, want READY with a pass", s.name, p, err)
			}
		}
	}
	st, err := e.Stats(ctx, name)
	if err != nil || st.Bypassed != 3 || st.Admitted != 0 || st.Waiting != 3 || st.Active != 3 || st.Head != 0 ||
		st.Credit != before.Credit || !st.CreditAt.Equal(before.CreditAt) {
		t.Fatalf("stats %+v %v: want 3 bypassed, none admitted, the line of 3 and the rate's credit untouched (%+v)", st, err, before)
	}
	links, err := e.BypassLinks(ctx, name)
	if err != nil || len(links) != 1 || links[0].Used != 2 || links[0].Uses != 2 || links[0].ExpiresAt == nil {
		t.Fatalf("links %+v %v", links, err)
	}
	// With every slot held the tick admits nobody; the passes' end frees
	// them, and the line moves again.
	if a := admitAfter(t, e, name, time.Second, time.Second, 2); len(a.Visitors) != 0 {
		t.Fatalf("a tick with every slot held admitted %v", a.Visitors)
	}
	clock.Advance(time.Duration(room.DefaultTokenTTL) * time.Second)
	if a := admitAfter(t, e, name, time.Second, time.Second, 3); len(a.Visitors) == 0 {
		t.Fatal("the tick after the passes ended admitted nobody")
	}
	if err := e.AddBypassLink(ctx, name, "link-3", 5, &end); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if _, err := e.Bypass(ctx, name, vs[4], tok[7], "link-3"); !errors.Is(err, ErrLinkExpired) {
		t.Fatalf("an expired link: %v", err)
	}
	if ok, err := e.RevokeBypassLink(ctx, name, "link-3"); err != nil || !ok {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	if _, err := e.Bypass(ctx, name, vs[4], tok[7], "link-3"); !errors.Is(err, ErrLinkUnknown) {
		t.Fatalf("a revoked link: %v", err)
	}
	if _, err := e.Bypass(ctx, "no-such-room-"+vs[0][:6], vs[4], tok[7], ""); !errors.Is(err, room.ErrNotFound) {
		t.Fatalf("an unknown room: %v", err)
	}
}

// TestBypassLeavesTheLine: a bypass takes its visitor out of the line or
// the pre-queue in the same call, counted as a leave; a room before its
// sale, in its pre-queue or paused lets staff in, one whose sale has
// ended does not.
func TestBypassLeavesTheLine(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	cases := []struct {
		name string
		mut  func(*room.Settings)
		// wait: the visitor joins first (the line, or the pre-queue).
		wait bool
		want error
	}{
		{"a waiting visitor", nil, true, nil},
		{"a pre-queued visitor", func(s *room.Settings) { s.PrequeueAt, s.OpensAt = at(-time.Minute), at(time.Hour) }, true, nil},
		{"before the sale", func(s *room.Settings) { s.OpensAt = at(time.Hour) }, false, nil},
		{"paused", func(s *room.Settings) { s.Paused = true }, true, nil},
		{"closed", func(s *room.Settings) { s.Mode = room.ModeClosed }, false, ErrSaleEnded},
		{"past its closing", func(s *room.Settings) {
			s.OpensAt, s.ClosesAt, s.ServeLineAfterClose = at(-2*time.Hour), at(-time.Hour), false
		}, false, ErrSaleEnded},
		{"past its closing, the line still served", func(s *room.Settings) {
			s.OpensAt, s.ClosesAt, s.ServeLineAfterClose = at(-2*time.Hour), at(-time.Hour), true
		}, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, name, _ := newRoom(t, settings(func(s *room.Settings) {
				s.Rate = 1
				if c.mut != nil {
					c.mut(s)
				}
			}))
			vs := visitors(t, 3)
			if c.wait {
				for _, v := range vs {
					if _, err := e.Enter(ctx, name, v); err != nil {
						t.Fatal(err)
					}
				}
			}
			before, err := e.Stats(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			b, err := e.Bypass(ctx, name, vs[1], tokens(t, 1)[0], "")
			if !errors.Is(err, c.want) || b.Admitted != (c.want == nil) {
				t.Fatalf("bypass: %+v %v, want %v", b, err, c.want)
			}
			st, err := e.Stats(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			left := int64(0)
			if c.wait && c.want == nil {
				left = 1
			}
			if st.Waiting+st.Prequeued != before.Waiting+before.Prequeued-left || st.Leaves != before.Leaves+left {
				t.Fatalf("stats %+v, before %+v: want %d left the line", st, before, left)
			}
			p, err := e.Position(ctx, name, vs[1])
			want := StatusReady
			if c.want != nil {
				want = StatusNotEntered
			}
			if err != nil || p.Status != want {
				t.Fatalf("position %+v %v, want %s", p, err, want)
			}
		})
	}
}

// TestAddBypassLink: concurrent adds never pass MaxBypassLinks, and a
// room that does not exist (or was deleted) takes no link.
func TestAddBypassLink(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(nil))
	var wg sync.WaitGroup
	errs := make([]error, 2*MaxBypassLinks)
	for i := range errs {
		wg.Go(func() { errs[i] = e.AddBypassLink(ctx, name, "link-"+strconv.Itoa(i), 1, nil) })
	}
	wg.Wait()
	added := 0
	for _, err := range errs {
		switch {
		case err == nil:
			added++
		case !errors.Is(err, ErrTooManyLinks):
			t.Fatal(err)
		}
	}
	links, err := e.BypassLinks(ctx, name)
	if err != nil || added != MaxBypassLinks || len(links) != MaxBypassLinks {
		t.Fatalf("%d added, %d kept (%v), want %d", added, len(links), err, MaxBypassLinks)
	}
	if _, err := e.DeleteRoom(ctx, name); err != nil {
		t.Fatal(err)
	}
	if err := e.AddBypassLink(ctx, name, "late", 1, nil); !errors.Is(err, room.ErrNotFound) {
		t.Fatalf("a link for a deleted room: %v, want room.ErrNotFound", err)
	}
	if links, err := e.BypassLinks(ctx, name); err != nil || len(links) != 0 {
		t.Fatalf("a deleted room's links: %v %v", links, err)
	}
}

// TestBypassKeepsAPassPastTheSale: a visitor let in before the sale ended
// keeps their pass when they come back after it (nothing taken).
func TestBypassKeepsAPassPastTheSale(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1 }))
	v := visitors(t, 1)[0]
	if b, err := e.Bypass(ctx, name, v, tokens(t, 1)[0], ""); err != nil || !b.Admitted {
		t.Fatalf("bypass: %+v %v", b, err)
	}
	set, err := e.Room(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	set.Mode = room.ModeClosed
	if err := e.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	if b, err := e.Bypass(ctx, name, v, tokens(t, 1)[0], ""); err != nil || b.Admitted {
		t.Fatalf("the pass's holder once the sale ended: %+v %v, want the pass kept", b, err)
	}
	if _, err := e.Bypass(ctx, name, visitors(t, 1)[0], tokens(t, 1)[0], ""); !errors.Is(err, ErrSaleEnded) {
		t.Fatalf("someone new once the sale ended: %v, want ErrSaleEnded", err)
	}
}
