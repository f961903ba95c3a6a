package k6

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of utime and stime in
// /proc/<pid>/stat: 100 on every Linux architecture Go builds for.
const clockTicks = 100

// ProcUsage is what the kernel says of a process at one moment: the CPU
// time it has used (user and system) and its resident set.
type ProcUsage struct {
	CPU time.Duration
	RSS int64 // bytes
}

// ReadProcUsage reads pid's CPU time from /proc/<pid>/stat (utime and
// stime) and its resident set from /proc/<pid>/status (VmRSS).
func ReadProcUsage(pid int) (ProcUsage, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ProcUsage{}, fmt.Errorf("proc usage: %w", err)
	}
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return ProcUsage{}, fmt.Errorf("proc usage: %w", err)
	}
	return parseProcUsage(stat, status)
}

// parseProcUsage reads utime and stime (fields 14 and 15; the command
// name, field 2, is in parentheses and may hold spaces) and VmRSS.
func parseProcUsage(stat, status []byte) (ProcUsage, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return ProcUsage{}, fmt.Errorf("proc usage: stat has no command name")
	}
	f := strings.Fields(string(stat[i+1:])) // f[0] is field 3, the state
	if len(f) < 13 {
		return ProcUsage{}, fmt.Errorf("proc usage: stat has %d fields", len(f)+2)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return ProcUsage{}, fmt.Errorf("proc usage: utime %q stime %q", f[11], f[12])
	}
	u := ProcUsage{CPU: time.Duration(utime+stime) * time.Second / clockTicks}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return ProcUsage{}, fmt.Errorf("proc usage: VmRSS %q", strings.TrimSpace(rest))
			}
			u.RSS = kb << 10
			return u, nil
		}
	}
	return ProcUsage{}, fmt.Errorf("proc usage: status has no VmRSS")
}

// IdleSample is one interval of an idle server: when it ended (since the
// server was ready), the share of one core it used over the interval, and
// its resident set at the end.
type IdleSample struct {
	At     time.Duration
	CPUPct float64 // percent of one core
	RSS    int64   // bytes
}

// IdleSampleOf returns the interval from a to b, ended at since the start.
func IdleSampleOf(at time.Duration, a, b ProcUsage, wall time.Duration) IdleSample {
	s := IdleSample{At: at, RSS: b.RSS}
	if wall > 0 {
		s.CPUPct = 100 * float64(b.CPU-a.CPU) / float64(wall)
	}
	return s
}

// The flatness bounds of an idle soak: the last window's mean CPU may be
// at most IdleCPUFactor times the first window's plus IdleCPUSlack
// percentage points of a core (a loaded machine's noise), and its mean
// RSS at most IdleRSSFactor times the first's plus IdleRSSSlack.
const (
	IdleCPUFactor = 1.5
	IdleCPUSlack  = 1.0
	IdleRSSFactor = 1.2
	IdleRSSSlack  = 16 << 20
)

// IdleVerdict compares an idle soak's first window after the warm-up with
// its last one.
type IdleVerdict struct {
	FirstCPU, LastCPU float64 // mean percent of one core
	FirstRSS, LastRSS int64   // mean bytes
	Flat              bool
	Why               string
}

// JudgeIdle compares the samples of the first window after warmup with
// those of the last window of the run; when the run is shorter than
// warmup and two windows, each window is half of what follows warmup. It
// returns an error when either window has no sample.
func JudgeIdle(samples []IdleSample, warmup, window time.Duration) (IdleVerdict, error) {
	if len(samples) == 0 {
		return IdleVerdict{}, fmt.Errorf("idle verdict: no samples")
	}
	end := samples[len(samples)-1].At
	window = min(window, (end-warmup)/2)
	if window <= 0 {
		return IdleVerdict{}, fmt.Errorf("idle verdict: a run of %v leaves no window after the %v warm-up", end, warmup)
	}
	var v IdleVerdict
	var nf, nl int
	for _, s := range samples {
		// A sample covers the interval that ends at At.
		if s.At > warmup && s.At <= warmup+window {
			v.FirstCPU += s.CPUPct
			v.FirstRSS += s.RSS
			nf++
		}
		if s.At > end-window {
			v.LastCPU += s.CPUPct
			v.LastRSS += s.RSS
			nl++
		}
	}
	if nf == 0 || nl == 0 {
		return IdleVerdict{}, fmt.Errorf("idle verdict: %d samples in the first window, %d in the last", nf, nl)
	}
	v.FirstCPU, v.LastCPU = v.FirstCPU/float64(nf), v.LastCPU/float64(nl)
	v.FirstRSS, v.LastRSS = v.FirstRSS/int64(nf), v.LastRSS/int64(nl)
	cpuBound := v.FirstCPU*IdleCPUFactor + IdleCPUSlack
	rssBound := int64(float64(v.FirstRSS)*IdleRSSFactor) + IdleRSSSlack
	var why []string
	if v.LastCPU > cpuBound {
		why = append(why, fmt.Sprintf("CPU rose from %.2f%% to %.2f%% of a core (bound %.2f%%)", v.FirstCPU, v.LastCPU, cpuBound))
	}
	if v.LastRSS > rssBound {
		why = append(why, fmt.Sprintf("RSS rose from %.1f to %.1f MiB (bound %.1f MiB)",
			mib(v.FirstRSS), mib(v.LastRSS), mib(rssBound)))
	}
	v.Flat = len(why) == 0
	if v.Flat {
		v.Why = fmt.Sprintf("CPU %.2f%% -> %.2f%% of a core (bound %.2f%%), RSS %.1f -> %.1f MiB (bound %.1f MiB)",
			v.FirstCPU, v.LastCPU, cpuBound, mib(v.FirstRSS), mib(v.LastRSS), mib(rssBound))
	} else {
		v.Why = strings.Join(why, "; ")
	}
	return v, nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
