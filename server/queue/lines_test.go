package queue

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"waitingroom/server/identity/identitytest"
	"waitingroom/server/room"
)

// linesRoom returns the settings of a room of rate per second with lines.
func linesRoom(t *testing.T, rate float64, lines ...room.Line) room.Settings {
	t.Helper()
	return settings(func(s *room.Settings) {
		s.Rate, s.MaxActive, s.Lines = rate, 0, lines
		for _, l := range lines {
			if l.Access == room.LineIdentity {
				s.Identity, s.IdentityKeys = room.IdentityOptional, identitytest.NewKey(t, "ec", "k1").PEM(t)
			}
		}
	})
}

// enterLine enters n new visitors with cred and returns them, checking
// that each waits in line want.
func enterLine(t *testing.T, e *Engine, name string, n int, cred Credentials, want string) []string {
	t.Helper()
	vs := visitors(t, n)
	for _, v := range vs {
		p, err := e.EnterWith(context.Background(), name, v, "", Campaign{}, Proof{}, cred)
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != StatusWaiting || p.LineName != want {
			t.Fatalf("enter with %+v: %s in line %q, want waiting in %q", cred, p.Status, p.LineName, want)
		}
	}
	return vs
}

// TestLinesChooseTheLine: a new place goes to the line the credentials
// name, else the first line they open; in a room with a code line, a
// visitor is asked for a code before they go to a line open to all.
func TestLinesChooseTheLine(t *testing.T) {
	code := room.Line{Name: "presale", Share: 0.5, Access: room.LineCode}
	member := room.Line{Name: "members", Share: 0.2, Access: room.LineIdentity}
	open := room.Line{Name: "general", Share: 0.3, Access: room.LineOpen}
	three := []room.Line{code, member, open}
	cases := []struct {
		name    string
		lines   []room.Line
		cred    Credentials
		want    string
		wantErr error
	}{
		{"anyone without a code: the open line", three, Credentials{NoCode: true}, "general", nil},
		{"anyone, before the code is asked: asked", three, Credentials{}, "", ErrCodeAsked},
		{"a code: the code line", three, Credentials{Code: true}, "presale", nil},
		{"a code naming a line", three, Credentials{Code: true, Line: "general"}, "general", nil},
		{"a code naming an unknown line", three, Credentials{Code: true, Line: "gone"}, "presale", nil},
		{"an identity: the identity line", three, Credentials{Identity: true}, "members", nil},
		{"an identity naming the open line", three, Credentials{Identity: true, Line: "general", NoCode: true}, "general", nil},
		{"an identity naming the code line", three, Credentials{Identity: true, Line: "presale"}, "", ErrCodeRequired},
		{"no code asked in a room without a code line", []room.Line{member, {Name: "general", Share: 0.8}}, Credentials{}, "general", nil},
		{"no open line: a code", []room.Line{{Name: "presale", Share: 1, Access: room.LineCode}}, Credentials{}, "", ErrCodeRequired},
		{"no open line: an identity", []room.Line{{Name: "members", Share: 1, Access: room.LineIdentity}}, Credentials{}, "", ErrIdentityRequired},
		{"no open line, a code for the identity line", []room.Line{{Name: "members", Share: 1, Access: room.LineIdentity}}, Credentials{Code: true}, "", ErrIdentityRequired},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, name, _ := newRoom(t, linesRoom(t, 10, c.lines...))
			v := visitors(t, 1)[0]
			p, err := e.EnterWith(context.Background(), name, v, "", Campaign{}, Proof{}, c.cred)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("enter: %v, want %v", err, c.wantErr)
			}
			if err == nil && (p.Status != StatusWaiting || p.LineName != c.want || p.Rank != 0 || p.Waiting != 1) {
				t.Fatalf("enter: %+v, want rank 0 of 1 in %q", p, c.want)
			}
			if err != nil {
				return
			}
			// The place is found again, in its line, with no credentials.
			again, err := e.Position(context.Background(), name, v)
			if err != nil || again.LineName != c.want || again.Line != p.Line {
				t.Fatalf("position: %+v %v, want the place in %q", again, err, c.want)
			}
		})
	}
}

// TestLinesSplitTheRate: the room admits exactly its rate, split between
// the lines by their shares while each has people waiting; a line that
// runs dry gives its part to the others.
func TestLinesSplitTheRate(t *testing.T) {
	cases := []struct {
		name             string
		presale, general int // how many wait in each line
		ticks            int
		want             [2]int // admitted from each line
		slack            int
	}{
		{"both lines backlogged", 400, 400, 40, [2]int{280, 120}, 1},
		{"the presale runs dry", 50, 400, 40, [2]int{50, 350}, 0},
		{"the general line runs dry", 400, 30, 40, [2]int{370, 30}, 0},
		{"one line only", 0, 400, 20, [2]int{0, 200}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := linesRoom(t, 10, room.Line{Name: "presale", Share: 0.7, Access: room.LineCode}, room.Line{Name: "general", Share: 0.3})
			e, name, _ := newRoom(t, s)
			line := map[string]int{}
			for _, v := range enterLine(t, e, name, c.presale, Credentials{Code: true}, "presale") {
				line[v] = 0
			}
			for _, v := range enterLine(t, e, name, c.general, Credentials{NoCode: true}, "general") {
				line[v] = 1
			}
			var got [2]int
			for range c.ticks {
				a := admitAfter(t, e, name, time.Second, time.Second, 30)
				for _, v := range a.Visitors {
					got[line[v]]++
				}
				if n := len(a.Visitors); n != 10 {
					t.Fatalf("a tick of 1 s at 10/s admitted %d", n)
				}
			}
			for i := range got {
				if d := got[i] - c.want[i]; d < -c.slack || d > c.slack {
					t.Fatalf("admitted %v from the lines, want %v (±%d)", got, c.want, c.slack)
				}
			}
		})
	}
}

// TestLinesRanksNeverRise: on a simulated clock, with joins, leaves and
// admissions interleaved at random in two lines sharing the rate, nobody's
// rank ever goes up, and each rank counts the people ahead in its own
// line.
func TestLinesRanksNeverRise(t *testing.T) {
	s := linesRoom(t, 7, room.Line{Name: "presale", Share: 0.6, Access: room.LineCode}, room.Line{Name: "general", Share: 0.4})
	e, name, _ := newRoom(t, s)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	type place struct {
		line string
		rank int64
	}
	waiting := map[string]*place{}
	order := map[string][]string{} // each line's visitors, in join order
	for step := range 200 {
		switch r := rng.IntN(10); {
		case r < 5:
			cred, want := Credentials{NoCode: true}, "general"
			if rng.IntN(2) == 0 {
				cred, want = Credentials{Code: true}, "presale"
			}
			v := enterLine(t, e, name, 1, cred, want)[0]
			waiting[v] = &place{line: want, rank: 1 << 62}
			order[want] = append(order[want], v)
		case r < 7 && len(waiting) > 0:
			for v := range waiting {
				if _, err := e.Leave(ctx, name, v); err != nil {
					t.Fatal(err)
				}
				delete(waiting, v)
				break
			}
		default:
			admitAfter(t, e, name, time.Duration(100+rng.IntN(900))*time.Millisecond, 500*time.Millisecond, 20)
		}
		ahead := map[string]int64{}
		for _, l := range []string{"presale", "general"} {
			for _, v := range order[l] {
				w, ok := waiting[v]
				if !ok {
					continue
				}
				p, err := e.Position(ctx, name, v)
				if err != nil {
					t.Fatal(err)
				}
				if p.Status == StatusReady {
					delete(waiting, v)
					continue
				}
				if p.Status != StatusWaiting || p.LineName != l {
					t.Fatalf("step %d: %s is %s in %q, want waiting in %q", step, v, p.Status, p.LineName, l)
				}
				if p.Rank > w.rank {
					t.Fatalf("step %d: a rank in %s rose from %d to %d", step, l, w.rank, p.Rank)
				}
				if p.Rank != ahead[l] {
					t.Fatalf("step %d: rank %d in %s, with %d ahead in that line", step, p.Rank, l, ahead[l])
				}
				w.rank = p.Rank
				ahead[l]++
			}
		}
	}
}

// TestLinesSnapshot: the snapshot carries each line's head, waiting,
// throughput and departures, and a leave departs from its own line.
func TestLinesSnapshot(t *testing.T) {
	s := linesRoom(t, 10, room.Line{Name: "presale", Share: 0.7, Access: room.LineCode}, room.Line{Name: "general", Share: 0.3})
	e, name, _ := newRoom(t, s)
	ctx := context.Background()
	enterLine(t, e, name, 5, Credentials{Code: true}, "presale")
	gen := enterLine(t, e, name, 5, Credentials{NoCode: true}, "general")
	if ok, err := e.Leave(ctx, name, gen[2]); err != nil || !ok {
		t.Fatalf("leave: %v %v", ok, err)
	}
	steps := []struct {
		name   string
		tokens int
		want   []LineState
	}{
		{"before any admission", 0, []LineState{{Head: 0, Waiting: 5, Rate: 7, Departed: nil}, {Head: 0, Waiting: 4, Rate: 3, Departed: []int64{3}}}},
		// 4 admissions split 0.7/0.3: 2.8 and 1.2, the larger remainder
		// takes the fourth.
		{"after 4 admissions", 4, []LineState{{Head: 3, Waiting: 2, Rate: 7}, {Head: 1, Waiting: 3, Rate: 3, Departed: []int64{3}}}},
	}
	for _, st := range steps {
		if st.tokens > 0 {
			admitAfter(t, e, name, time.Second, time.Second, st.tokens)
		}
		snap, err := e.Snapshot(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Lines) != len(st.want) {
			t.Fatalf("%s: lines %+v", st.name, snap.Lines)
		}
		var waiting int64
		for i, l := range snap.Lines {
			w := st.want[i]
			if l.Head != w.Head || l.Waiting != w.Waiting || l.Rate != w.Rate || !slices.Equal(l.Departed, w.Departed) {
				t.Fatalf("%s: line %d is %+v, want %+v", st.name, i, l, w)
			}
			waiting += l.Waiting
		}
		if snap.Waiting != waiting || snap.Head != snap.Lines[0].Head {
			t.Fatalf("%s: snapshot waiting %d head %d, lines %+v", st.name, snap.Waiting, snap.Head, snap.Lines)
		}
	}
}

// TestLinesChangeOnlyWhenEmpty: a save may change the lines' shares and
// access, and add lines, at any time; it renames or removes a line other
// than the first only while nobody is in it.
func TestLinesChangeOnlyWhenEmpty(t *testing.T) {
	pre := room.Line{Name: "presale", Share: 0.5, Access: room.LineCode}
	gen := room.Line{Name: "general", Share: 0.5}
	cases := []struct {
		name  string
		lines []room.Line
		busy  bool // refused: a line in use renamed or removed
	}{
		{"the same lines", []room.Line{pre, gen}, false},
		{"other shares and access", []room.Line{{Name: "presale", Share: 0.8}, {Name: "general", Share: 0.2, Access: room.LineCode}}, false},
		{"a line added", []room.Line{{Name: "presale", Share: 0.4, Access: room.LineCode}, {Name: "general", Share: 0.4}, {Name: "late", Share: 0.2}}, false},
		{"the first line renamed", []room.Line{{Name: "early", Share: 0.5, Access: room.LineCode}, gen}, false},
		{"the first line renamed, in use", []room.Line{{Name: "early", Share: 0.5, Access: room.LineCode}, gen}, true},
		{"the lines swapped", []room.Line{gen, pre}, true},
		{"a line in use renamed", []room.Line{pre, {Name: "public", Share: 0.5}}, true},
		{"a line in use removed", []room.Line{{Name: "presale", Share: 1, Access: room.LineCode}}, true},
		{"every line removed", nil, true},
	}
	for _, c := range cases {
		for _, inUse := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, in use %v", c.name, inUse), func(t *testing.T) {
				s := linesRoom(t, 10, pre, gen)
				e, name, _ := newRoom(t, s)
				// Someone in the general line, and for the cases about the
				// first line someone in the presale line.
				firstInUse := strings.Contains(c.name, "first line renamed, in use")
				if inUse {
					enterLine(t, e, name, 1, Credentials{NoCode: true}, "general")
					if firstInUse {
						enterLine(t, e, name, 1, Credentials{Code: true}, "presale")
					}
				}
				// The same in a pre-queue: an entry of the general line.
				ps := linesRoom(t, 10, pre, gen)
				ps.PrequeueAt, ps.OpensAt = at(-time.Hour), at(time.Hour)
				pe, pname, _ := newRoom(t, ps)
				if inUse {
					cred := Credentials{NoCode: true}
					if firstInUse {
						cred = Credentials{Code: true}
					}
					if p, err := pe.EnterWith(context.Background(), pname, visitors(t, 1)[0], "", Campaign{}, Proof{}, cred); err != nil || p.Status != StatusPrequeued {
						t.Fatalf("pre-queue join: %+v %v", p, err)
					}
				}
				ps.Lines = c.lines
				if err := pe.SaveRoom(context.Background(), pname, ps); errors.Is(err, room.ErrLineInUse) != (c.busy && inUse) {
					t.Fatalf("save over a pre-queue: %v, want refused %v", err, c.busy && inUse)
				}
				s.Lines = c.lines
				err := e.SaveRoom(context.Background(), name, s)
				if want := c.busy && inUse; errors.Is(err, room.ErrLineInUse) != want || !want && err != nil {
					t.Fatalf("save: %v, want refused %v", err, want)
				}
				if fe, ok := errors.AsType[*room.FieldError](err); err != nil && (!ok || fe.Field != "lines") {
					t.Fatalf("save: %v, want a field error of lines", err)
				}
			})
		}
	}
}

// TestLinesDraw: a room with lines has one pre-queue, drawn once: each
// line gets its own entries, numbered from its block in the drawn order
// (the room's drawn list restricted to the line), each shown their
// pre-queue ticket, a leave before the draw
// takes the entry out, and a leave during it departs from the entry's
// line. Each line then ranks its own, and admits by its share.
func TestLinesDraw(t *testing.T) {
	ctx := context.Background()
	s := linesRoom(t, 10, room.Line{Name: "presale", Share: 0.5, Access: room.LineCode}, room.Line{Name: "general", Share: 0.5})
	s.PrequeueAt, s.OpensAt = at(-time.Hour), at(time.Hour)
	e, name, _ := newRoom(t, s)
	lineOf := map[int64]string{} // pre-queue ticket → line
	who := map[string]int64{}    // visitor → pre-queue ticket
	join := func(cred Credentials, want string) string {
		v := visitors(t, 1)[0]
		p, err := e.EnterWith(ctx, name, v, "", Campaign{}, Proof{}, cred)
		if err != nil || p.Status != StatusPrequeued || p.LineName != want {
			t.Fatalf("pre-queue join with %+v: %+v %v, want pre-queued in %q", cred, p, err, want)
		}
		lineOf[p.Ticket], who[v] = want, p.Ticket
		return v
	}
	var pre, gen []string
	for i := range 40 {
		if i%3 == 0 {
			pre = append(pre, join(Credentials{Code: true}, "presale"))
		} else {
			gen = append(gen, join(Credentials{NoCode: true}, "general"))
		}
	}
	// A leave before the draw takes the entry out of its line's count.
	if ok, err := e.Leave(ctx, name, pre[0]); err != nil || !ok {
		t.Fatalf("leave the pre-queue: %v %v", ok, err)
	}
	delete(who, pre[0])
	openNow(t, e, name)
	if _, err := e.Admit(ctx, name, time.Second, nil); err != nil { // freezes the pre-queue
		t.Fatal(err)
	}
	// A leave during the draw departs from the entry's line.
	if ok, err := e.Leave(ctx, name, gen[0]); err != nil || !ok {
		t.Fatalf("leave during the draw: %v %v", ok, err)
	}
	withdrawn := who[gen[0]]
	delete(who, gen[0])
	if st, err := e.Draw(ctx, name, DrawOptions{Chunk: 7, Depth: 2}); err != nil || st != DrawDone {
		t.Fatalf("draw: %v %v", st, err)
	}
	info, err := e.DrawInfo(ctx, name)
	if err != nil || len(info.Tickets) != 39 {
		t.Fatalf("draw info: %d tickets %v, want 39", len(info.Tickets), err)
	}
	// Each line, in drawn order, from the room's drawn list.
	want := map[string][]int64{}
	for _, tk := range info.Tickets {
		if tk != withdrawn {
			want[lineOf[tk]] = append(want[lineOf[tk]], tk)
		}
	}
	byTicket := map[int64]string{}
	for v, tk := range who {
		byTicket[tk] = v
	}
	for l, tickets := range want {
		for rank, tk := range tickets {
			p, err := e.Position(ctx, name, byTicket[tk])
			// Shown their pre-queue ticket, to check the draw with.
			if err != nil || p.Status != StatusWaiting || p.LineName != l || p.Rank != int64(rank) || p.Ticket != tk {
				t.Fatalf("%s's %d-th drawn (pre-queue ticket %d): %+v %v", l, rank, tk, p, err)
			}
		}
	}
	if len(want["presale"]) != 13 || len(want["general"]) != 25 {
		t.Fatalf("drawn into presale %d, general %d: want 13 and 25", len(want["presale"]), len(want["general"]))
	}
	// Admissions split by the shares: 5 and 5 a second.
	line := map[string]string{}
	for _, tickets := range want {
		for _, tk := range tickets {
			line[byTicket[tk]] = lineOf[tk]
		}
	}
	got := map[string]int{}
	for range 2 {
		for _, v := range admitAfter(t, e, name, time.Second, time.Second, 20).Visitors {
			got[line[v]]++
		}
	}
	if got["presale"] != 10 || got["general"] != 10 {
		t.Fatalf("admitted %v, want 10 from each line", got)
	}
}

// TestLinesAdaptWaiting: the adaptive controller counts everyone waiting,
// in every line, so that a room whose first line is empty still climbs
// and probes.
func TestLinesAdaptWaiting(t *testing.T) {
	s := linesRoom(t, 10, room.Line{Name: "presale", Share: 0.7, Access: room.LineCode}, room.Line{Name: "general", Share: 0.3})
	s.Adaptive, s.Adapt.MinRate, s.Adapt.MaxRate = true, 0, 100
	e, name, _ := newRoom(t, s)
	enterLine(t, e, name, 3, Credentials{Code: true}, "presale")
	enterLine(t, e, name, 5, Credentials{NoCode: true}, "general")
	rs, err := e.AdaptRooms(context.Background(), []string{name})
	if r, ok := rs[name]; err != nil || !ok || r.Waiting != 8 {
		t.Fatalf("adaptive rooms: %+v %v, want 8 waiting", rs, err)
	}
}
