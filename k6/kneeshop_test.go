package k6

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// offer sends orders to s at rate per second for d, each in its own
// goroutine, and returns their latencies, sorted, and how many were
// refused.
func offer(s *KneeShop, rate float64, d time.Duration) ([]time.Duration, int) {
	var (
		mu      sync.Mutex
		took    []time.Duration
		refused int
		wg      sync.WaitGroup
	)
	gap := time.Duration(float64(time.Second) / rate)
	for at := time.Duration(0); at < d; at += gap {
		wg.Go(func() {
			start := time.Now()
			ok := s.Order(context.Background())
			mu.Lock()
			defer mu.Unlock()
			if ok {
				took = append(took, time.Since(start))
			} else {
				refused++
			}
		})
		time.Sleep(gap)
	}
	wg.Wait()
	slices.Sort(took)
	return took, refused
}

// TestKneeShopKnee: under the knee an order takes about Work; over it the
// wait grows with the excess; a wait bound refuses the excess; a capacity
// cut mid-run turns a healthy rate into an overload. Each case runs on the
// fake clock of a synctest bubble: the orders come exactly at their rate.
func TestKneeShopKnee(t *testing.T) {
	t.Parallel()
	const work = 50 * time.Millisecond
	tests := []struct {
		name           string
		capacity       float64 // K = capacity × work
		rate           float64
		maxWait        time.Duration
		cutTo          float64 // capacity set after 200 ms (0: none)
		p95Min, p95Max time.Duration
		refused        bool
	}{
		{name: "under the knee", capacity: 80, rate: 40, p95Min: work, p95Max: 3 * work},
		{name: "over the knee", capacity: 40, rate: 100, p95Min: 6 * work, p95Max: 5 * time.Second},
		{name: "over, bounded wait", capacity: 40, rate: 120, maxWait: 100 * time.Millisecond, p95Min: work, p95Max: 200*time.Millisecond + work, refused: true},
		{name: "capacity cut", capacity: 80, rate: 40, cutTo: 20, p95Min: 4 * work, p95Max: 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				s := NewKneeShop(tt.capacity, work, tt.maxWait)
				if tt.cutTo > 0 {
					go s.RunSchedule(ctx, Schedule{{tt.capacity, 200 * time.Millisecond}, {tt.cutTo, time.Second}})
				}
				took, refused := offer(s, tt.rate, 500*time.Millisecond)
				p95 := durationPercentile(took, 95)
				t.Logf("p95 %v, %d served, %d refused", p95, len(took), refused)
				if p95 < tt.p95Min || p95 > tt.p95Max {
					t.Fatalf("p95 %v, want within [%v, %v] (%d served)", p95, tt.p95Min, tt.p95Max, len(took))
				}
				if (refused > 0) != tt.refused {
					t.Fatalf("%d refused, want some: %t", refused, tt.refused)
				}
			})
		})
	}
}

// TestKneeShopRecord: the record holds each second's served orders,
// their p95 and the capacity then; the handler answers 200 for an order
// served and 503 past the wait bound. It runs on the fake clock of a
// synctest bubble, with the handler called directly.
func TestKneeShopRecord(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := NewKneeShop(20, 100*time.Millisecond, 50*time.Millisecond) // 2 workers
		h := s.Handler()
		codes := make(chan int, 4)
		for range 4 { // two served, two past the bound
			go func() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/checkout", nil))
				codes <- w.Code
			}()
		}
		got := map[int]int{}
		for range 4 {
			got[<-codes]++
		}
		if got[http.StatusOK] != 2 || got[http.StatusServiceUnavailable] != 2 {
			t.Fatalf("answers %v; want two 200 and two 503", got)
		}
		s.SetCapacity(40)
		time.Sleep(time.Until(s.start.Add(1100 * time.Millisecond)))
		rec := s.Record()
		if len(rec) != 1 || rec[0].Served != 2 || rec[0].Rejected != 2 || rec[0].Capacity != 40 || rec[0].P95 != 100*time.Millisecond {
			t.Fatalf("record %+v; want one second: 2 served in 100ms, 2 refused, capacity 40", rec)
		}
	})
}

func TestParseSchedule(t *testing.T) {
	tests := []struct {
		in    string
		want  Schedule
		wrong bool
	}{
		{in: "100/60s,50/40s,100/1m", want: Schedule{{100, time.Minute}, {50, 40 * time.Second}, {100, time.Minute}}},
		{in: "150/2m", want: Schedule{{150, 2 * time.Minute}}},
		{in: "100", wrong: true},
		{in: "0/10s", wrong: true},
		{in: "100/10ms", wrong: true},
		{in: "100/10s,", wrong: true},
		{in: "x/10s", wrong: true},
	}
	for _, tt := range tests {
		got, err := ParseSchedule(tt.in)
		if (err != nil) != tt.wrong || !slices.Equal(got, tt.want) {
			t.Fatalf("%q: %v %v", tt.in, got, err)
		}
		if err == nil {
			if again, _ := ParseSchedule(got.String()); !slices.Equal(again, got) {
				t.Fatalf("%q does not read back: %q", tt.in, got.String())
			}
		}
	}
}
