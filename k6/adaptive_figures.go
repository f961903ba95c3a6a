package k6

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Adaptive admission's targets.
const (
	// ConvergeWithin: from minRate, 90% of the knee within 60 s.
	ConvergeWithin = 60
	// MaxViolations: p95 over the target in at most 2 of any 10
	// consecutive seconds.
	MaxViolations = 2
	// ReactWithin: after a capacity cut, p95 back under the target
	// within 5 s.
	ReactWithin = 5
	// SettleWithin: the rate settles within 10% of the new knee.
	SettleWithin = 10.0
	// RecoverWithin: after capacity comes back, 90% of it within 60 s.
	RecoverWithin = 60
)

// AdaptiveFigures are converge / react / recover, from one run whose
// schedule is a knee, a cut, and a rise (the first cut and the first rise
// after it are measured). A figure that was not reached is -1.
type AdaptiveFigures struct {
	// Converge is the seconds from the start to a rate of 90% of the
	// first knee.
	Converge int `json:"converge"`
	// Violations is the most seconds with p95 over the target in any 10
	// consecutive seconds of the first phase; ViolationsAll of the run.
	Violations    int `json:"violations"`
	ViolationsAll int `json:"violationsAll"`
	// React is the seconds from the cut until p95 is under the target and
	// stays so for 5 s (or to the phase's end).
	React int `json:"react"`
	// Settled is the mean rate of the cut phase's last 10 s, and
	// SettledOff its distance from the new knee, in percent.
	Settled    float64 `json:"settled"`
	SettledOff float64 `json:"settledOff"`
	// Recover is the seconds from the rise to a rate of 90% of the new
	// knee.
	Recover int `json:"recover"`
	// Knees are the schedule's capacities, in order.
	Knees []float64 `json:"knees"`
}

// Figures measures converge / react / recover on a run.
func (r AdaptiveReport) Figures() (AdaptiveFigures, error) {
	sc, err := ParseSchedule(r.Schedule)
	if err != nil {
		return AdaptiveFigures{}, err
	}
	f := AdaptiveFigures{Converge: -1, React: -1, Recover: -1}
	starts := sc.Starts()
	at := func(d time.Duration) int { return int(d / time.Second) }
	end := func(i int) int {
		if i+1 < len(sc) {
			return min(at(starts[i+1]), len(r.Seconds))
		}
		return len(r.Seconds)
	}
	for _, p := range sc {
		f.Knees = append(f.Knees, p.Capacity)
	}
	over := func(s AdaptiveSecond) bool { return s.Served > 0 && s.P95 > r.Target }
	reach := func(from, to int, rate float64) int {
		for t := from; t < to; t++ {
			if r.Seconds[t].Rate >= 0.9*rate {
				return t - from
			}
		}
		return -1
	}
	f.Converge = reach(0, end(0), sc[0].Capacity)
	f.Violations = violations(r.Seconds[:end(0)], over)
	f.ViolationsAll = violations(r.Seconds, over)
	cut := -1
	for i := 1; i < len(sc); i++ {
		if cut < 0 && sc[i].Capacity < sc[i-1].Capacity {
			cut = i
			from, to := at(starts[i]), end(i)
			for t := from; t < to; t++ {
				ok := true
				for u := t; u < min(t+5, to); u++ {
					ok = ok && !over(r.Seconds[u])
				}
				if ok {
					f.React = t - from
					break
				}
			}
			var sum float64
			n := 0
			for t := max(from, to-10); t < to; t++ {
				sum += r.Seconds[t].Rate
				n++
			}
			if n > 0 {
				f.Settled = sum / float64(n)
				f.SettledOff = math.Round(1000*(f.Settled/sc[i].Capacity-1)) / 10
			}
		}
		if cut > 0 && i > cut && sc[i].Capacity > sc[i-1].Capacity {
			f.Recover = reach(at(starts[i]), end(i), sc[i].Capacity)
			break
		}
	}
	return f, nil
}

// violations returns the most seconds over in any 10 consecutive ones.
func violations(secs []AdaptiveSecond, over func(AdaptiveSecond) bool) int {
	most := 0
	for i := range secs {
		n := 0
		for _, s := range secs[i:min(i+10, len(secs))] {
			if over(s) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// Misses lists the targets the figures miss, in words ("" none).
func (f AdaptiveFigures) Misses() []string {
	var out []string
	if f.Converge < 0 || f.Converge > ConvergeWithin {
		out = append(out, fmt.Sprintf("converge: 90%% of the knee not reached within %d s (%d)", ConvergeWithin, f.Converge))
	}
	if f.Violations > MaxViolations {
		out = append(out, fmt.Sprintf("converge: p95 over the target in %d of 10 consecutive seconds (at most %d)", f.Violations, MaxViolations))
	}
	if f.React < 0 || f.React > ReactWithin {
		out = append(out, fmt.Sprintf("react: p95 back under the target after %d s (within %d)", f.React, ReactWithin))
	}
	if f.SettledOff > SettleWithin || f.SettledOff < -SettleWithin {
		out = append(out, fmt.Sprintf("react: settled %.1f%% off the new knee (within %.0f%%)", f.SettledOff, SettleWithin))
	}
	if f.Recover < 0 || f.Recover > RecoverWithin {
		out = append(out, fmt.Sprintf("recover: 90%% of the knee not reached again within %d s (%d)", RecoverWithin, f.Recover))
	}
	return out
}

// String prints the figures as BENCHMARKS.md's table.
func (f AdaptiveFigures) String() string {
	var b strings.Builder
	knee := func(i int) float64 {
		if i < len(f.Knees) {
			return f.Knees[i]
		}
		return 0
	}
	fmt.Fprintf(&b, "| figure | measured | target |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| converge: time to 90%% of the knee (%.0f/s) from minRate | %s | ≤ %d s |\n", knee(0), secs(f.Converge), ConvergeWithin)
	fmt.Fprintf(&b, "| converge: most seconds with p95 over the target in 10 consecutive | %d | ≤ %d |\n", f.Violations, MaxViolations)
	fmt.Fprintf(&b, "| the whole run: most seconds with p95 over the target in 10 consecutive | %d | |\n", f.ViolationsAll)
	fmt.Fprintf(&b, "| react: p95 back under the target after the cut to %.0f/s | %s | ≤ %d s |\n", knee(1), secs(f.React), ReactWithin)
	fmt.Fprintf(&b, "| react: settled rate (last 10 s of the cut) vs the new knee | %.1f/s (%+.1f%%) | within ±%.0f%% |\n", f.Settled, f.SettledOff, SettleWithin)
	if len(f.Knees) > 2 {
		fmt.Fprintf(&b, "| recover: time to 90%% of the knee (%.0f/s) again | %s | ≤ %d s |\n", knee(2), secs(f.Recover), RecoverWithin)
	}
	return b.String()
}

func secs(n int) string {
	if n < 0 {
		return "not reached"
	}
	return fmt.Sprintf("%d s", n)
}
