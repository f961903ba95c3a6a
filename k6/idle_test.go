package k6

import (
	"strings"
	"testing"
	"time"
)

// idleRun returns one sample a minute for n minutes, CPU and RSS (MiB) as
// functions of the minute.
func idleRun(n int, cpu func(m int) float64, rssMiB func(m int) int64) []IdleSample {
	out := make([]IdleSample, n)
	for i := range out {
		m := i + 1
		out[i] = IdleSample{At: time.Duration(m) * time.Minute, CPUPct: cpu(m), RSS: rssMiB(m) << 20}
	}
	return out
}

func TestJudgeIdle(t *testing.T) {
	const warmup, window = 2 * time.Minute, 30 * time.Minute
	for _, tc := range []struct {
		name     string
		samples  []IdleSample
		flat     bool
		why      string
		first    float64
		last     float64
		errorful bool
	}{
		{"steady 2h", idleRun(120, func(int) float64 { return 0.5 }, func(int) int64 { return 60 }), true, "CPU 0.50% -> 0.50%", 0.5, 0.5, false},
		// The embedded store's sweep: CPU grows with the minutes.
		{"rising 2h", idleRun(120, func(m int) float64 { return 0.4 + float64(m) }, func(int) int64 { return 60 }), false, "CPU rose", 17.9, 105.9, false},
		// Within 1.5x plus one point: noise on a loaded machine.
		{"noise within the slack", idleRun(120, func(m int) float64 { return 0.5 + float64(m/90) }, func(int) int64 { return 60 }), true, "", 0.5, 1.5, false},
		{"leaking RSS", idleRun(120, func(int) float64 { return 0.5 }, func(m int) int64 { return 60 + int64(m) }), false, "RSS rose", 0.5, 0.5, false},
		// A 10-minute smoke: the windows are minutes 3-6 and 7-10.
		{"smoke rising", idleRun(10, func(m int) float64 { return float64(m) }, func(int) int64 { return 60 }), false, "CPU rose", 4.5, 8.5, false},
		{"smoke steady", idleRun(10, func(int) float64 { return 2 }, func(int) int64 { return 60 }), true, "", 2, 2, false},
		{"too short", idleRun(2, func(int) float64 { return 2 }, func(int) int64 { return 60 }), false, "", 0, 0, true},
		{"none", nil, false, "", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := JudgeIdle(tc.samples, warmup, window)
			if tc.errorful {
				if err == nil {
					t.Fatalf("verdict %+v, want an error", v)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.Flat != tc.flat || !strings.Contains(v.Why, tc.why) {
				t.Fatalf("flat %v (%s), want %v (%q)", v.Flat, v.Why, tc.flat, tc.why)
			}
			if d := v.FirstCPU - tc.first; d > 1e-9 || d < -1e-9 {
				t.Errorf("first window CPU %v, want %v", v.FirstCPU, tc.first)
			}
			if d := v.LastCPU - tc.last; d > 1e-9 || d < -1e-9 {
				t.Errorf("last window CPU %v, want %v", v.LastCPU, tc.last)
			}
		})
	}
}

func TestParseProcUsage(t *testing.T) {
	stat := "4242 (wait ing) S 1 4242 4242 0 -1 4194560 9000 0 0 0 1234 566 0 0 20 0 12 0 100 800000000 12000 18446744073709551615\n"
	status := "Name:\twaitingroom\nVmPeak:\t  900000 kB\nVmRSS:\t   61440 kB\nThreads:\t12\n"
	for _, tc := range []struct {
		name, stat, status string
		want               ProcUsage
		ok                 bool
	}{
		{"a server", stat, status, ProcUsage{CPU: 18 * time.Second, RSS: 60 << 20}, true},
		{"no name", "4242 S 1", status, ProcUsage{}, false},
		{"short stat", "4242 (x) S 1 2 3", status, ProcUsage{}, false},
		{"no VmRSS", stat, "Name:\tx\n", ProcUsage{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcUsage([]byte(tc.stat), []byte(tc.status))
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("%+v (%v), want %+v ok=%v", got, err, tc.want, tc.ok)
			}
		})
	}
}

func TestIdleSampleOf(t *testing.T) {
	a := ProcUsage{CPU: 10 * time.Second, RSS: 1 << 20}
	b := ProcUsage{CPU: 10*time.Second + 600*time.Millisecond, RSS: 2 << 20}
	s := IdleSampleOf(5*time.Minute, a, b, time.Minute)
	if s.At != 5*time.Minute || s.CPUPct != 1 || s.RSS != 2<<20 {
		t.Fatalf("%+v, want 1%% of a core and the later RSS", s)
	}
}
