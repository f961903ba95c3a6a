package sse

import (
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"waitingroom/server/push"
	"waitingroom/server/queue"
)

// page is what one waiting page shows between events: the rank it was
// last told, when, and its countdown.
type page struct {
	rank int64
	at   time.Duration
	cd   push.Countdown
	told bool
}

func (p page) shown(at time.Duration) int64 { return p.cd.Shown(p.rank, at-p.at) }

// line is a simulated room for TestCadenceNeverOptimistic: who is still
// waiting, in ticket order.
type line struct {
	waiting []int64 // tickets, ascending
	head    int64
}

// admitFIFO lets in the first n; admitRandom n at random, who depart
// above the head as in mode random.
func (l *line) admitFIFO(n int) (head int64, departed []int64) {
	n = min(n, len(l.waiting))
	if n > 0 {
		l.head = l.waiting[n-1]
		l.waiting = l.waiting[n:]
	}
	return l.head, nil
}

func (l *line) admitRandom(n int) (head int64, departed []int64) {
	for range min(n, len(l.waiting)) {
		i := rand.IntN(len(l.waiting))
		departed = append(departed, l.waiting[i])
		l.waiting = append(l.waiting[:i], l.waiting[i+1:]...)
	}
	return l.head, departed
}

// TestCadenceNeverOptimistic drives a room's scan tick by tick on a
// simulated clock, with passes up to 300 ms late, through a steady line,
// a rate cut the countdowns did not expect, a pause, mode random, slots
// that free up in waves, and ticks that stop for 20 s while the stall
// watch looks four times a tick. Each page follows its countdown between
// events. Whatever a page shows is never below its visitor's real rank,
// no event makes a shown rank go up, the front hears every tick, nearest
// first, a pause and a stall reach everyone, and the writes a pass stay
// far below one per visitor.
func TestCadenceNeverOptimistic(t *testing.T) {
	const n = 3000
	never := func(int64) bool { return false }
	for _, tc := range []struct {
		name     string
		tick     time.Duration
		rate     func(k int64) float64 // the room's rate at tick k
		admit    func(k int64) int     // how many tick k lets in (nil: the rate's)
		pause    func(k int64) bool
		stall    func(k int64) bool // no tick, no pass
		random   bool
		slots    bool
		maxWrite float64 // writes a pass, at most
	}{
		{name: "steady", tick: time.Second, rate: func(int64) float64 { return 5 }, maxWrite: 450},
		{name: "the line moves at half the rate from tick 40", tick: time.Second, rate: func(int64) float64 { return 5 },
			admit: func(k int64) int {
				if k >= 40 && k%2 == 0 {
					return 5
				} else if k >= 40 {
					return 0
				}
				return 5
			}, maxWrite: 600},
		{name: "paused from 30 to 60", tick: time.Second, rate: func(int64) float64 { return 8 },
			pause: func(k int64) bool { return k >= 30 && k < 60 }, maxWrite: 500},
		{name: "fast ticks", tick: 200 * time.Millisecond, rate: func(int64) float64 { return 20 }, maxWrite: 700},
		{name: "mode random", tick: time.Second, rate: func(int64) float64 { return 5 }, random: true, maxWrite: 480},
		{name: "slots in waves", tick: time.Second, rate: func(int64) float64 { return 1 }, slots: true,
			admit: func(k int64) int {
				if k%20 == 0 {
					return 20
				}
				return 0
			}, maxWrite: 450},
		{name: "ticks stop for 20 s", tick: time.Second, rate: func(int64) float64 { return 5 },
			stall: func(k int64) bool { return k >= 40 && k < 60 }, maxWrite: 480},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.pause == nil {
				tc.pause = never
			}
			if tc.stall == nil {
				tc.stall = never
			}
			m := newMetrics()
			h := newHub(&fakeSource{}, Options{Tick: tc.tick, SeenEvery: time.Hour}, m, slog.New(slog.NewTextHandler(io.Discard, nil)))
			defer h.Close()
			r := &Room{name: "cadence"}
			l := &line{}
			byTicket := map[int64]*conn{}
			pages := map[int64]*page{}
			for i := range int64(n) {
				c := &conn{lastRank: i, lastTick: 1}
				c.ticket.Store(i + 1)
				byTicket[i+1] = c
				pages[i+1] = &page{rank: i, told: true} // the connect's own event
				l.waiting = append(l.waiting, i+1)
			}
			var st push.State
			var slots *queue.Slots
			if tc.slots {
				slots = &queue.Slots{Rate: 1, MaxActive: 20, Hold: 20}
			}
			st.Apply(queue.Event{Tick: 1, Rate: tc.rate(1), Waiting: n, Phase: queue.PhaseOpen, Random: queue.Flag(tc.random), Slots: slots})
			truth := st.Clone() // the line as of the last tick
			var credit float64
			var writes, passes int64
			var held, stalls int
			wasPaused := false
			for k := int64(2); k <= 120; k++ {
				base := time.Duration(k) * tc.tick
				if tc.stall(k) {
					// No tick: the stall watch looks four times a tick.
					for q := range 4 {
						at := base + time.Duration(q)*tc.tick/4
						if r.stalled(h.born.Add(at), tc.tick) {
							stalls++
							for _, p := range pages {
								*p = page{rank: p.shown(at), at: at}
								held++
							}
						}
						checkPages(t, k, at, &truth, pages)
					}
					continue
				}
				paused, rate := tc.pause(k), tc.rate(k)
				e := queue.Event{Tick: k, Rate: rate, Paused: queue.Flag(paused), Phase: queue.PhaseOpen, Random: queue.Flag(tc.random), Slots: slots}
				count := 0
				switch {
				case paused:
				case tc.admit != nil:
					count = tc.admit(k)
				default:
					// The tick's credit, capped at two batches after a stall,
					// and a fifth over its batch at most, as admit.lua caps
					// them.
					credit = min(credit+rate*tc.tick.Seconds(), 2*rate*tc.tick.Seconds()+1)
					count = min(int(credit), int(math.Ceil(1.2*rate*tc.tick.Seconds()-1e-9)))
					credit -= float64(count)
				}
				if tc.random {
					e.Head, e.Departed = l.admitRandom(count)
				} else {
					e.Head, e.Departed = l.admitFIFO(count)
				}
				e.Waiting = int64(len(l.waiting))
				if paused {
					e.Rate = 0
				}
				at := base + time.Duration(rand.Int64N(int64(tc.tick)*3/10))
				// Until this pass, every page must show at least the rank
				// its visitor had since the last tick.
				checkPages(t, k, at, &truth, pages)
				st.Apply(e)
				truth.Apply(e)
				r.mu.Lock()
				r.lastEvent, r.state = h.born.Add(at), st.Clone() // as the hub's Event does
				r.mu.Unlock()
				live := make([]*conn, 0, len(l.waiting))
				for _, ticket := range l.waiting {
					live = append(live, byTicket[ticket])
				}
				plan := h.scan(r, &st, live, h.born.Add(at))
				passes++
				writes += int64(len(plan.due))
				frontSeen := map[*conn]bool{}
				lastRank, inFront := int64(-1), true
				for _, d := range plan.due {
					ticket := d.c.ticket.Load()
					if s := pages[ticket].shown(at); d.rank > s {
						t.Fatalf("tick %d: ticket %d's event says %d, up from the %d its page showed", k, ticket, d.rank, s)
					}
					if d.rank < push.Front(st.Rate) {
						if !inFront || d.rank < lastRank {
							t.Fatalf("tick %d: the front is not written first, nearest first", k)
						}
						lastRank = d.rank
						frontSeen[d.c] = true
					} else {
						inFront = false
					}
					*pages[ticket] = page{rank: d.rank, at: at, cd: d.cd}
				}
				for _, c := range live {
					rank, _ := st.Rank(c.ticket.Load())
					if rank < push.Front(st.Rate) && !frontSeen[c] {
						t.Fatalf("tick %d: rank %d, at the front, got no event", k, rank)
					}
				}
				if paused != wasPaused && len(plan.due) != len(live) {
					t.Fatalf("tick %d: the pause changed, yet only %d of %d pages were told", k, len(plan.due), len(live))
				}
				if k > 2 && tc.stall(k-1) && len(plan.due) != len(live) {
					t.Fatalf("tick %d: the ticks came back, yet only %d of %d held pages were told", k, len(plan.due), len(live))
				}
				wasPaused = paused
			}
			per := float64(writes) / float64(passes)
			if per > tc.maxWrite {
				t.Fatalf("%.0f writes a pass for up to %d waiting, want at most %v", per, n, tc.maxWrite)
			}
			if tc.stall(40) && (stalls != 1 || held == 0) {
				t.Fatalf("the stall was seen %d times, %d pages held; want once", stalls, held)
			}
			t.Logf("%.0f writes a pass for up to %d waiting; %v corrections", per, n, testutil.ToFloat64(m.Corrections))
		})
	}
}

// checkPages fails t if a page shows, at at, a rank below its visitor's
// rank in truth (the line as of the last tick).
func checkPages(t *testing.T, k int64, at time.Duration, truth *push.State, pages map[int64]*page) {
	t.Helper()
	for ticket, p := range pages {
		rank, passed := truth.Rank(ticket)
		if passed {
			continue
		}
		if s := p.shown(at); s < rank {
			t.Fatalf("tick %d, %v: ticket %d's page shows %d, ahead of their rank %d", k, at, ticket, s, rank)
		}
	}
}

func TestAppendCountdownEvent(t *testing.T) {
	p := queue.Position{Status: queue.StatusWaiting, Rank: 5000, Ticket: 5001, Phase: queue.PhaseOpen}
	for _, tc := range []struct {
		cd   push.Countdown
		want string
	}{
		{push.Countdown{Every: 1}, `,"every":1}` + "\n\n"},
		{push.Countdown{Every: 51, Pace: 4.5, After: 21 * time.Second, Span: 30 * time.Second, Quiet: 18 * time.Second}, `,"every":51,"pace":4.50,"after":21000,"span":30000,"quiet":18000}` + "\n\n"},
		{push.Countdown{Every: 16, After: 21 * time.Second, Quiet: 18 * time.Second}, `,"every":16,"after":21000,"span":0,"quiet":18000}` + "\n\n"},
	} {
		got := string(appendCountdownEvent(nil, 7, p, 123, tc.cd))
		if !strings.HasPrefix(got, "id: 7\nevent: position\ndata: {\"status\":\"WAITING\",\"rank\":5000,") || !strings.HasSuffix(got, tc.want) {
			t.Errorf("event %q, want it to end %q", got, tc.want)
		}
	}
}

// TestStalled: a room whose ticks stopped while pages count down is
// stalled once, past its due time; one with nobody left in line is not
// (it sleeps), and stops counting.
func TestStalled(t *testing.T) {
	t0 := time.Now()
	for _, tc := range []struct {
		name     string
		waiting  int64
		counting bool
		quiet    time.Duration
		want     bool
	}{
		{"line, ticks stopped", 5, true, 10 * time.Second, true},
		{"line, ticks on time", 5, true, time.Second, false},
		{"nobody counting", 5, false, 10 * time.Second, false},
		{"line ran out", 0, true, 10 * time.Second, false},
	} {
		r := &Room{name: "s"}
		r.counting.Store(tc.counting)
		r.state.Waiting, r.lastEvent = tc.waiting, t0
		if got := r.stalled(t0.Add(tc.quiet), time.Second); got != tc.want {
			t.Errorf("%s: stalled %t, want %t", tc.name, got, tc.want)
		}
		if tc.waiting == 0 && r.counting.Load() {
			t.Errorf("%s: still counting", tc.name)
		}
	}
}
