package k6

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RedisCounters are what a Redis server says of itself at one moment: every
// command call it has counted (INFO commandstats, the scripts' inner calls
// included) and the CPU time it has used (INFO cpu, user and system, its
// main and background threads).
type RedisCounters struct {
	Calls int64
	CPU   time.Duration
}

// ParseRedisCounters reads RedisCounters from the text of INFO
// commandstats and INFO cpu.
func ParseRedisCounters(commandstats, cpu string) (RedisCounters, error) {
	var c RedisCounters
	var err error
	if c.Calls, err = CommandCalls(commandstats); err != nil {
		return c, err
	}
	found := 0
	for line := range strings.Lines(cpu) {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || name != "used_cpu_sys" && name != "used_cpu_user" {
			continue
		}
		s, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return c, fmt.Errorf("INFO cpu line %q: %w", strings.TrimSpace(line), err)
		}
		c.CPU += time.Duration(s * float64(time.Second))
		found++
	}
	if found != 2 {
		return c, fmt.Errorf("INFO cpu: used_cpu_sys and used_cpu_user: %d of 2 found", found)
	}
	return c, nil
}

// CommandCalls sums the calls of every command in the text of INFO
// commandstats.
func CommandCalls(commandstats string) (int64, error) {
	var total int64
	for line := range strings.Lines(commandstats) {
		_, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		n, err := strconv.ParseInt(calls, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("INFO commandstats line %q: %w", strings.TrimSpace(line), err)
		}
		total += n
	}
	return total, nil
}

// RoomsCost is what a deployment of many rooms costs over a hold: Redis
// commands and CPU, and each instance's CPU and resident set.
type RoomsCost struct {
	Rooms, Busy, Instances int
	Hold                   time.Duration
	// RedisCallsPerSec and RedisCPUPct (of one core) are the Redis
	// server's, from RedisCounters at the hold's two ends.
	RedisCallsPerSec, RedisCPUPct float64
	// SentPerSec are the Redis commands the instances sent, all
	// together (their own counter): the Redis-side figures also count the
	// run's own top-ups of the busy rooms' lines.
	SentPerSec float64
	// TicksPerSec are the admission ticks the instances ran, all
	// together (their issuer_tick_duration_seconds count): a room ticked
	// by one instance at a time adds 1/TICK, whatever the number of
	// instances.
	TicksPerSec float64
	// ServerCPUPct (of one core) and ServerRSS (bytes) are per instance,
	// at the hold's end for the RSS.
	ServerCPUPct []float64
	ServerRSS    []int64
	// Admitted is each busy room's admissions over the hold, against
	// Expected (its rate × the hold).
	Admitted []int64
	Expected float64
}

// CostOf is the cost of a hold of d between the Redis counters r0 and r1
// and the instances' usages u0 and u1 (one each, in order).
func CostOf(d time.Duration, r0, r1 RedisCounters, u0, u1 []ProcUsage) RoomsCost {
	c := RoomsCost{Hold: d, Instances: len(u0)}
	s := d.Seconds()
	c.RedisCallsPerSec = float64(r1.Calls-r0.Calls) / s
	c.RedisCPUPct = 100 * (r1.CPU - r0.CPU).Seconds() / s
	for i := range u0 {
		c.ServerCPUPct = append(c.ServerCPUPct, 100*(u1[i].CPU-u0[i].CPU).Seconds()/s)
		c.ServerRSS = append(c.ServerRSS, u1[i].RSS)
	}
	return c
}

// AdmissionSpread returns the lowest and highest of the busy rooms'
// admissions as a share of Expected (1 is exact); 0, 0 without busy rooms.
func (c RoomsCost) AdmissionSpread() (lo, hi float64) {
	for i, n := range c.Admitted {
		r := float64(n) / c.Expected
		if i == 0 || r < lo {
			lo = r
		}
		if i == 0 || r > hi {
			hi = r
		}
	}
	return lo, hi
}

// String is the cost as the run prints it: the totals, then per room.
func (c RoomsCost) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d rooms (%d with a line), %d instances, held %v\n", c.Rooms, c.Busy, c.Instances, c.Hold.Round(time.Second))
	fmt.Fprintf(&b, "Redis: %.0f commands/s (%.2f per room), %.1f%% of a core; sent by the instances: %.0f/s; admission ticks: %.1f/s\n",
		c.RedisCallsPerSec, c.RedisCallsPerSec/float64(max(c.Rooms, 1)), c.RedisCPUPct, c.SentPerSec, c.TicksPerSec)
	for i := range c.ServerCPUPct {
		fmt.Fprintf(&b, "instance %d: %.1f%% of a core, %.1f MiB (%.1f KiB per room)\n", i+1, c.ServerCPUPct[i],
			float64(c.ServerRSS[i])/(1<<20), float64(c.ServerRSS[i])/1024/float64(max(c.Rooms, 1)))
	}
	if len(c.Admitted) > 0 {
		lo, hi := c.AdmissionSpread()
		fmt.Fprintf(&b, "busy rooms: admitted %.1f%%–%.1f%% of rate × hold (%.0f each)\n", 100*lo, 100*hi, c.Expected)
	}
	return b.String()
}

// SumMetric adds up the samples of the Prometheus metric name (every label
// set) in a /metrics text.
func SumMetric(text, name string) float64 {
	var sum float64
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || rest[0] != ' ' && rest[0] != '{' {
			continue
		}
		f := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(f) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			sum += v
		}
	}
	return sum
}
