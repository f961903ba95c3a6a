package k6

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// KneeShop is a stand-in downstream with a knee, for adaptive admission's
// measurements: K workers, each order holding one for Work, orders beyond
// K waiting their turn in arrival order. Its capacity is C = K / Work
// orders per second: under C an order takes about Work, over C the wait
// grows for as long as the excess lasts. A wait longer than MaxWait is
// answered 503. The capacity can be changed while it serves
// (SetCapacity, RunSchedule).
//
// Every request under /checkout is an order; GET / answers at once.
type KneeShop struct {
	// Work is how long an order holds its worker.
	Work time.Duration
	// MaxWait bounds an order's wait for a worker (0: no bound).
	MaxWait time.Duration

	mu      sync.Mutex
	limit   int
	active  int
	waiters []chan struct{}
	start   time.Time
	secs    []kneeSecond
}

// kneeSecond is one second's orders.
type kneeSecond struct {
	took     []time.Duration
	rejected int
	capacity float64
}

// KneeSecond is one second of a KneeShop's record.
type KneeSecond struct {
	T int `json:"t"`
	// Served counts the orders answered 200 that second, P95 their
	// latency's p95 (wait and work).
	Served int           `json:"served"`
	P95    time.Duration `json:"p95"`
	// Rejected counts the orders answered 503 (waited past MaxWait).
	Rejected int `json:"rejected"`
	// Capacity is the knee, orders per second, at the end of the second.
	Capacity float64 `json:"capacity"`
}

// NewKneeShop returns a shop whose orders take work, with capacity
// orders per second, whose record starts now.
func NewKneeShop(capacity float64, work, maxWait time.Duration) *KneeShop {
	s := &KneeShop{Work: work, MaxWait: maxWait, start: time.Now()}
	s.SetCapacity(capacity)
	return s
}

// Workers returns how many workers give capacity orders per second when
// each takes work (at least 1, none for a capacity of 0).
func Workers(capacity float64, work time.Duration) int {
	if capacity <= 0 {
		return 0
	}
	return max(1, int(math.Round(capacity*work.Seconds())))
}

// SetCapacity sets the knee, in orders per second, by the number of
// workers; orders waiting go in at once when it rises.
func (s *KneeShop) SetCapacity(capacity float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = Workers(capacity, s.Work)
	s.second(time.Now()).capacity = s.capacityLocked()
	s.grant()
}

// Capacity returns the knee now, in orders per second.
func (s *KneeShop) Capacity() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.capacityLocked()
}

func (s *KneeShop) capacityLocked() float64 {
	return float64(s.limit) / s.Work.Seconds()
}

// Restart empties the record and starts it again now.
func (s *KneeShop) Restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.start, s.secs = time.Now(), nil
	s.second(s.start).capacity = s.capacityLocked()
}

// second returns the record of the second at, which it makes (and the
// ones before it, with the capacity then) if needed. s.mu is held.
func (s *KneeShop) second(at time.Time) *kneeSecond {
	i := max(0, int(at.Sub(s.start)/time.Second))
	for len(s.secs) <= i {
		c := s.capacityLocked()
		if n := len(s.secs); n > 0 {
			c = s.secs[n-1].capacity
		}
		s.secs = append(s.secs, kneeSecond{capacity: c})
	}
	return &s.secs[i]
}

// grant lets waiting orders in, first come first, while workers are free.
// s.mu is held.
func (s *KneeShop) grant() {
	for s.active < s.limit && len(s.waiters) > 0 {
		close(s.waiters[0])
		s.waiters = s.waiters[1:]
		s.active++
	}
}

// acquire waits for a worker, at most MaxWait; false when none came.
func (s *KneeShop) acquire(ctx context.Context) bool {
	s.mu.Lock()
	if s.active < s.limit && len(s.waiters) == 0 {
		s.active++
		s.mu.Unlock()
		return true
	}
	ch := make(chan struct{})
	s.waiters = append(s.waiters, ch)
	s.mu.Unlock()
	var timeout <-chan time.Time
	if s.MaxWait > 0 {
		t := time.NewTimer(s.MaxWait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ch:
		return true
	case <-ctx.Done():
	case <-timeout:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.waiters, ch); i >= 0 {
		s.waiters = slices.Delete(s.waiters, i, i+1)
		return false
	}
	// Granted while giving up: hand the worker on.
	s.active--
	s.grant()
	return false
}

func (s *KneeShop) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	s.grant()
}

// Order takes one order: a wait for a worker, then Work. It reports
// whether it was served (false: it waited past MaxWait, or ctx ended).
func (s *KneeShop) Order(ctx context.Context) bool {
	arrived := time.Now()
	if !s.acquire(ctx) {
		s.mu.Lock()
		s.second(time.Now()).rejected++
		s.mu.Unlock()
		return false
	}
	t := time.NewTimer(s.Work)
	select {
	case <-t.C:
	case <-ctx.Done():
		t.Stop()
	}
	s.release()
	now := time.Now()
	s.mu.Lock()
	sec := s.second(now)
	sec.took = append(sec.took, now.Sub(arrived))
	s.mu.Unlock()
	return ctx.Err() == nil
}

// Handler returns the shop's routes: every request under /checkout is an
// order (200 when served, 503 past MaxWait); GET / answers at once.
func (s *KneeShop) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "the knee shop\n")
	})
	mux.HandleFunc("/checkout", s.serveOrder)
	mux.HandleFunc("/checkout/", s.serveOrder)
	return mux
}

func (s *KneeShop) serveOrder(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !s.Order(r.Context()) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "the knee shop is full", http.StatusServiceUnavailable)
		return
	}
	io.WriteString(w, "ordered\n")
}

// Record returns the seconds recorded so far but the current one.
func (s *KneeShop) Record() []KneeSecond {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.second(time.Now())
	out := make([]KneeSecond, 0, len(s.secs))
	for i, sec := range s.secs[:len(s.secs)-1] {
		took := slices.Clone(sec.took)
		slices.Sort(took)
		out = append(out, KneeSecond{T: i, Served: len(took), P95: durationPercentile(took, 95), Rejected: sec.rejected,
			Capacity: sec.capacity})
	}
	return out
}

// durationPercentile returns the p-th percentile of sorted (0 when empty).
func durationPercentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Phase is a capacity held for a while.
type Phase struct {
	Capacity float64
	For      time.Duration
}

// Schedule is the phases of a run, in order.
type Schedule []Phase

// ParseSchedule reads "100/60s,50/40s,100/60s": capacity/duration, each
// phase in turn.
func ParseSchedule(s string) (Schedule, error) {
	var out Schedule
	for part := range strings.SplitSeq(s, ",") {
		c, d, ok := strings.Cut(strings.TrimSpace(part), "/")
		capacity, err1 := strconv.ParseFloat(c, 64)
		dur, err2 := time.ParseDuration(d)
		if !ok || err1 != nil || err2 != nil || capacity <= 0 || capacity > 10000 || dur < time.Second || dur > time.Hour {
			return nil, fmt.Errorf("schedule: %q is not capacity/duration (0 < capacity ≤ 10000, 1s ≤ duration ≤ 1h)", part)
		}
		out = append(out, Phase{Capacity: capacity, For: dur})
	}
	return out, nil
}

// String is the schedule as ParseSchedule reads it.
func (sc Schedule) String() string {
	parts := make([]string, len(sc))
	for i, p := range sc {
		parts[i] = strconv.FormatFloat(p.Capacity, 'f', -1, 64) + "/" + p.For.String()
	}
	return strings.Join(parts, ",")
}

// Total is the schedule's length.
func (sc Schedule) Total() time.Duration {
	var t time.Duration
	for _, p := range sc {
		t += p.For
	}
	return t
}

// Starts returns when each phase starts, from the schedule's start.
func (sc Schedule) Starts() []time.Duration {
	out := make([]time.Duration, len(sc))
	var t time.Duration
	for i, p := range sc {
		out[i] = t
		t += p.For
	}
	return out
}

// RunSchedule sets each phase's capacity in turn, from now, and returns
// when the last phase has started (the last capacity stays) or ctx ends.
func (s *KneeShop) RunSchedule(ctx context.Context, sc Schedule) {
	start := time.Now()
	for i, at := range sc.Starts() {
		if i > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(start.Add(at))):
			}
		}
		s.SetCapacity(sc[i].Capacity)
	}
}
