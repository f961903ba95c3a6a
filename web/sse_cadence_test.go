package web

import (
	"io"
	"log/slog"
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

// TestCadenceNeverOptimistic drives a room's scan tick by tick on a
// simulated clock, with passes up to 300 ms late, through a steady line, a
// rate cut the countdowns did not expect, a pause and a resume. Each page
// follows its countdown between events. Whatever a page shows is never
// below its visitor's real rank, no event makes a shown rank go up, the
// front and the pause reach everyone at once, and the writes a tick stay
// far below one per visitor.
func TestCadenceNeverOptimistic(t *testing.T) {
	const n = 3000
	for _, tc := range []struct {
		name  string
		tick  time.Duration
		rate  func(k int64) float64 // the tick's admissions a second
		pause func(k int64) bool
	}{
		{"steady", time.Second, func(int64) float64 { return 5 }, func(int64) bool { return false }},
		{"rate cut by half at tick 40", time.Second, func(k int64) float64 {
			if k >= 40 {
				return 2.5
			}
			return 5
		}, func(int64) bool { return false }},
		{"paused from 30 to 60", time.Second, func(int64) float64 { return 8 }, func(k int64) bool { return k >= 30 && k < 60 }},
		{"fast ticks", 200 * time.Millisecond, func(int64) float64 { return 20 }, func(int64) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMetrics()
			h := NewHub(&fakeSource{}, HubOptions{Tick: tc.tick, SeenEvery: time.Hour}, m, slog.New(slog.NewTextHandler(io.Discard, nil)))
			defer h.Close()
			r := &hubRoom{name: "cadence"}
			conns := make([]*sseConn, n)
			pages := make([]page, n)
			for i := range conns {
				c := &sseConn{lastRank: int64(i), lastTick: 1}
				c.ticket.Store(int64(i + 1))
				conns[i] = c
				pages[i] = page{rank: int64(i), told: true} // the connect's own event
			}
			st := push.State{Tick: 1, Head: 0, Rate: 5, Phase: queue.PhaseOpen}
			var admitted float64
			var writes, ticks, pauseTick int64
			wasPaused := false
			for k := int64(2); k <= 120; k++ {
				paused := tc.pause(k)
				rate := tc.rate(k)
				if !paused {
					admitted += rate * tc.tick.Seconds()
				}
				st.Tick, st.Head, st.Paused, st.Rate = k, int64(admitted), paused, rate
				at := time.Duration(k)*tc.tick + time.Duration(rand.Int64N(int64(tc.tick)*3/10))
				// Until this pass, every page must show at least the rank
				// its visitor had since the last tick.
				for i, p := range pages {
					ticket := int64(i + 1)
					if ticket <= st.Head {
						continue
					}
					truthBefore := ticket - (int64(admittedBefore(k, tc.rate, tc.pause, tc.tick))) - 1
					if s := p.shown(at); s < truthBefore {
						t.Fatalf("tick %d: visitor %d's page shows %d, ahead of their rank %d", k, i, s, truthBefore)
					}
				}
				live := conns[:0:0]
				for _, c := range conns {
					if c.ticket.Load() > st.Head {
						live = append(live, c)
					}
				}
				plan := h.scan(r, &st, live, h.born.Add(at))
				ticks++
				writes += int64(len(plan.due))
				frontSeen := map[*sseConn]bool{}
				lastRank := int64(-1)
				inFront := true
				for _, d := range plan.due {
					i := d.c.ticket.Load() - 1
					if s := pages[i].shown(at); d.rank > s {
						t.Fatalf("tick %d: visitor %d's event says %d, up from the %d its page showed", k, i, d.rank, s)
					}
					if d.rank < push.Front(rate) {
						if !inFront || d.rank < lastRank {
							t.Fatalf("tick %d: the front is not written first, nearest first", k)
						}
						lastRank = d.rank
						frontSeen[d.c] = true
					} else {
						inFront = false
					}
					pages[i] = page{rank: d.rank, at: at, cd: d.cd}
				}
				for _, c := range live {
					rank, _ := st.Rank(c.ticket.Load())
					if rank < push.Front(rate) && !frontSeen[c] {
						t.Fatalf("tick %d: rank %d, at the front, got no event", k, rank)
					}
				}
				if paused != wasPaused {
					pauseTick = k
					if len(plan.due) != len(live) {
						t.Fatalf("tick %d: the pause changed, yet only %d of %d pages were told", k, len(plan.due), len(live))
					}
				}
				wasPaused = paused
			}
			if tc.name == "paused from 30 to 60" && pauseTick == 0 {
				t.Fatal("the pause never changed")
			}
			// Every visitor hears at least once a minute; beyond that the
			// writes a tick must be far below one per waiting visitor.
			if per := float64(writes) / float64(ticks); per > n/4 {
				t.Fatalf("%.0f writes a tick for %d waiting", per, n)
			}
			t.Logf("%.0f writes a tick for up to %d waiting; %v corrections", float64(writes)/float64(ticks), n, testutil.ToFloat64(m.SSECorrections))
		})
	}
}

// admittedBefore is how many the room had admitted by the tick before k:
// the truth a page is held to until tick k's pass.
func admittedBefore(k int64, rate func(int64) float64, pause func(int64) bool, tick time.Duration) float64 {
	var a float64
	for j := int64(2); j < k; j++ {
		if !pause(j) {
			a += rate(j) * tick.Seconds()
		}
	}
	return float64(int64(a))
}

func TestAppendCountdownEvent(t *testing.T) {
	p := queue.Position{Status: queue.StatusWaiting, Rank: 5000, Ticket: 5001, Phase: queue.PhaseOpen}
	for _, tc := range []struct {
		cd   push.Countdown
		want string
	}{
		{push.Countdown{Every: 1}, `,"every":1}` + "\n\n"},
		{push.Countdown{Every: 51, Pace: 4.5, After: 2 * time.Second, Span: 49 * time.Second}, `,"every":51,"pace":4.50,"after":2000,"span":49000}` + "\n\n"},
	} {
		got := string(appendCountdownEvent(nil, 7, p, 123, tc.cd))
		if !strings.HasPrefix(got, "id: 7\nevent: position\ndata: {\"status\":\"WAITING\",\"rank\":5000,") || !strings.HasSuffix(got, tc.want) {
			t.Errorf("event %q, want it to end %q", got, tc.want)
		}
	}
}

// TestReadySpreadIsTheRooms: the room's readySpreadMs wins over the hub's
// default, and is held to one tick.
func TestReadySpreadIsTheRooms(t *testing.T) {
	ms := func(n int) *int { return &n }
	for _, tc := range []struct {
		name   string
		tick   time.Duration
		room   *int
		within time.Duration
	}{
		{"the room's 0 sends at once", 10 * time.Second, ms(0), time.Second},
		{"held to one tick", 200 * time.Millisecond, ms(10_000), 1500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := "tok"
			src := &fakeSource{snap: queue.Snapshot{Tick: 1, Waiting: 1, Rate: 1},
				pos: func(string) queue.Position { return queue.Position{Status: queue.StatusReady, EntryToken: &tok} }}
			hub := NewHub(src, HubOptions{Tick: tc.tick, ReadySpread: time.Hour, SeenEvery: time.Hour}, NewMetrics(), slog.New(slog.NewTextHandler(io.Discard, nil)))
			defer hub.Close()
			r, err := hub.room(t.Context(), "spread")
			if err != nil {
				t.Fatal(err)
			}
			srv, cli := tcpPair(t)
			c := newSSEConn(srv)
			c.ip = "a"
			hub.acquireIP("a")
			hub.attach(r, c, queue.Position{Status: queue.StatusWaiting, Ticket: 1, Tick: 1})
			start := time.Now()
			hub.Event("spread", queue.Event{Tick: 2, Head: 1, Rate: 1, Phase: queue.PhaseOpen, ReadySpreadMs: tc.room})
			cli.SetReadDeadline(time.Now().Add(tc.within))
			buf := make([]byte, 4096)
			var got []byte
			for !strings.Contains(string(got), "event: ready") {
				n, err := cli.Read(buf)
				if err != nil {
					t.Fatalf("no ready within %v: %v (read %q)", tc.within, err, got)
				}
				got = append(got, buf[:n]...)
			}
			if !strings.Contains(string(got), `"t":`) {
				t.Fatalf("the ready event has no tick time: %q", got)
			}
			t.Logf("ready after %v", time.Since(start).Round(time.Millisecond))
		})
	}
}
