package gatemode

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestReportCheck: a report counts 0 to reportCountMax answers per
// outcome, with a sample of at most reportSampleMax durations, no more
// than it counts, and one at least when it counts any.
func TestReportCheck(t *testing.T) {
	for _, tt := range []struct {
		name string
		rep  gateReport
		want string // in the error; "" for none
	}{
		{"empty", gateReport{}, ""},
		{"sampled", gateReport{OK: 10, OKMs: []float64{1, 2}, Failed: 1, FailedMs: []float64{30}}, ""},
		{"negative", gateReport{OK: -1}, `"ok" must count`},
		{"too many", gateReport{Failed: reportCountMax + 1, FailedMs: []float64{1}}, `"failed" must count`},
		{"unsampled", gateReport{OK: 3}, `"okMs" needs a sample`},
		{"oversampled", gateReport{OK: 1, OKMs: []float64{1, 2}}, `carries more durations`},
		{"sample too long", gateReport{OK: 300, OKMs: make([]float64, reportSampleMax+1)}, `at most 256`},
		{"duration out of range", gateReport{OK: 1, OKMs: []float64{reportMsMax + 1}}, `milliseconds from 0`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rep.check()
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("check() = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestReportFeed: each sampled duration stands for an equal share of its
// outcome's count, the remainder going to the first ones.
func TestReportFeed(t *testing.T) {
	var sig recordedSignal
	gateReport{OK: 5, OKMs: []float64{10, 20}, Failed: 1, FailedMs: []float64{1.5}}.feed(&sig, "r")
	want := []observed{
		{"r", ShopAnswered, 10 * time.Millisecond, 3},
		{"r", ShopAnswered, 20 * time.Millisecond, 2},
		{"r", ShopUnavailable, 1500 * time.Microsecond, 1},
	}
	if len(sig.got) != len(want) {
		t.Fatalf("observed %+v, want %+v", sig.got, want)
	}
	for i := range want {
		if sig.got[i] != want[i] {
			t.Fatalf("observed %+v, want %+v", sig.got, want)
		}
	}
}

type observed struct {
	room, reason string
	took         time.Duration
	n            int64
}

// recordedSignal is a ShopSignal that keeps what it is told.
type recordedSignal struct {
	mu  sync.Mutex
	got []observed
}

func (s *recordedSignal) ObserveOrders(roomName, reason string, took time.Duration, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, observed{roomName, reason, took, n})
}
