package adapt

import (
	"fmt"
	"testing"
	"time"

	"waitingroom/server/room"
)

// A knee of the shop: workers × service time, and the room's target and
// maxRate for it. The targets are 2.5 times the service time: a shop
// whose service alone nears the target has no knee to find.
type knee struct {
	name    string
	workers int
	service time.Duration
	target  int     // ms
	maxX    float64 // maxRate, in knees
	minRate float64
}

func (k knee) capacity() float64 { return float64(k.workers) / k.service.Seconds() }

var knees = []knee{
	{"20/s", 10, 500 * time.Millisecond, 1250, 5, 1},
	{"20/s tight", 10, 500 * time.Millisecond, 1250, 2, 1},
	{"60/s", 12, 200 * time.Millisecond, 500, 3, 1},
	{"200/s", 20, 100 * time.Millisecond, 250, 5, 5},
	{"200/s tight", 20, 100 * time.Millisecond, 250, 2, 5},
	{"1000/s", 50, 50 * time.Millisecond, 125, 3, 5},
	{"1000/s wide", 50, 50 * time.Millisecond, 125, 5, 5},
}

// The sale: capacity halves at dropAt and comes back at backAt.
const (
	dropAt = 90
	backAt = 150
	saleS  = 240
)

func (k knee) sale(seed uint64) simShop {
	return simShop{Workers: k.workers, Service: k.service, Seconds: saleS, Seed: seed,
		Line:     int64(max(20000, 300*k.capacity())),
		Changes:  []simChange{{dropAt, k.workers / 2}, {backAt, k.workers}},
		Settings: room.Adapt{MinRate: k.minRate, MaxRate: k.maxX * k.capacity(), TargetP95Ms: k.target, MaxErrorRate: 0.02}}
}

// figures are a sale's measured figures.
type figures struct {
	reach90   int     // seconds from the start to a rate of 90% of the knee (-1: never)
	worst10   int     // the most seconds over the target in any 10 before the drop
	back      int     // seconds from the drop to the first of 5 under the target
	cutAfter  int     // seconds from the drop to the first cut
	settleErr float64 // the largest |rate/knee - 1| over [drop+20, back)
	meanErr   float64 // |mean rate/knee - 1| over the same
	recover90 int     // seconds from the capacity's return to 90% of it (-1: never)
	worst10R  int     // the most seconds over the target in any 10 from back on
	failed    int64
}

func measure(secs []simSecond, target time.Duration) figures {
	var f figures
	over := func(s simSecond) bool { return s.P95 > target }
	worst := func(from, to int) int {
		w := 0
		for i := from; i+10 <= to; i++ {
			n := 0
			for _, s := range secs[i : i+10] {
				if over(s) {
					n++
				}
			}
			w = max(w, n)
		}
		return w
	}
	first := func(from, to int, ok func(simSecond) bool) int {
		for i := from; i < to; i++ {
			if ok(secs[i]) {
				return i - from
			}
		}
		return -1
	}
	f.reach90 = first(0, dropAt, func(s simSecond) bool { return s.Rate >= 0.9*s.Capacity })
	f.worst10 = worst(0, dropAt)
	f.back = first(dropAt, backAt-5, func(s simSecond) bool { return false })
	for i := dropAt; i < backAt-5; i++ {
		calm := true
		for _, s := range secs[i : i+5] {
			calm = calm && !over(s)
		}
		if calm {
			f.back = i - dropAt
			break
		}
	}
	f.cutAfter = first(dropAt, backAt, func(s simSecond) bool { return len(s.Reason) > 4 && s.Reason[:4] == "cut_" })
	var sum float64
	for _, s := range secs[dropAt+20 : backAt] {
		e := s.Rate/s.Capacity - 1
		f.settleErr = max(f.settleErr, e, -e)
		sum += s.Rate / s.Capacity
	}
	m := sum/float64(backAt-dropAt-20) - 1
	f.meanErr = max(m, -m)
	f.recover90 = first(backAt, saleS, func(s simSecond) bool { return s.Rate >= 0.9*s.Capacity })
	f.worst10R = worst(dropAt+max(f.back, 0), saleS)
	for _, s := range secs {
		f.failed += s.Failed
	}
	return f
}

func (f figures) String() string {
	return fmt.Sprintf("reach90 %3d s, worst10 %d | cut after %d s, p95 back %2d s, settle max %4.1f %% mean %4.1f %% | recover90 %3d s, worst10 %d | failed %d",
		f.reach90, f.worst10, f.cutAfter, f.back, 100*f.settleErr, 100*f.meanErr, f.recover90, f.worst10R, f.failed)
}

// TestLawOnSimulatedShop runs a sale against every knee, with a few seeds,
// and checks converge, react and recover.
func TestLawOnSimulatedShop(t *testing.T) {
	for _, k := range knees {
		for seed := range uint64(3) {
			t.Run(fmt.Sprintf("%s/seed%d", k.name, seed), func(t *testing.T) {
				secs := k.sale(seed + 1).run(DefaultParams())
				f := measure(secs, time.Duration(k.target)*time.Millisecond)
				t.Log(f)
			})
		}
	}
}
