package share_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/server/share"
)

// memLinks is a link store in memory that has every code but those in
// missing, and can be made to fail writes, to be slow, or to run a hook
// while a write is under way.
type memLinks struct {
	share.LinkStore
	missing string // a code it does not have ("" none); others exist
	delay   time.Duration
	gets    atomic.Int64
	failAdd atomic.Bool
	onAdd   func() // runs in AddClicks, before it answers

	mu     sync.Mutex
	clicks map[string]int64
}

func newMemLinks() *memLinks { return &memLinks{clicks: map[string]int64{}} }

func (m *memLinks) Get(ctx context.Context, code string) (share.Link, error) {
	m.gets.Add(1)
	select {
	case <-time.After(m.delay):
	case <-ctx.Done():
		return share.Link{}, ctx.Err()
	}
	if code == m.missing || len(code) > share.CodeLen {
		return share.Link{}, share.ErrNotFound
	}
	return share.Link{Code: code, Room: "spring"}, nil
}

func (m *memLinks) AddClicks(ctx context.Context, code string, n int64) error {
	if m.onAdd != nil {
		m.onAdd()
	}
	if m.failAdd.Load() {
		return errors.New("database away")
	}
	m.mu.Lock()
	m.clicks[code] += n
	m.mu.Unlock()
	return nil
}

func (m *memLinks) total() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, c := range m.clicks {
		n += c
	}
	return n
}

// code returns the i-th test code.
func code(i int) string { return fmt.Sprintf("c%07d", i) }

// TestClicksKept: a click counted is written once the store takes it,
// whatever failed in between and however many other links came and went;
// unknown codes are asked for once a while; a follower gets no lookup
// slot answers busy soon.
func TestClicksKept(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		run  func(t *testing.T, m *memLinks, l *share.Links) (wantClicks int64)
	}{
		{"a failed flush puts its clicks back", func(t *testing.T, m *memLinks, l *share.Links) int64 {
			for i := range 3 {
				for range 5 {
					if _, err := l.Follow(ctx, code(i), true); err != nil {
						t.Fatal(err)
					}
				}
			}
			m.failAdd.Store(true)
			if err := l.Flush(ctx); err == nil {
				t.Fatal("no error from a failing store")
			}
			m.failAdd.Store(false)
			return 15
		}},
		{"links forgotten while their clicks are written, and the write fails", func(t *testing.T, m *memLinks, l *share.Links) int64 {
			if _, err := l.Follow(ctx, code(0), true); err != nil {
				t.Fatal(err)
			}
			m.failAdd.Store(true)
			m.onAdd = func() { // the known links turn over meanwhile
				m.onAdd = nil
				for i := 1; i <= 40000; i++ {
					if _, err := l.Follow(ctx, code(i), false); err != nil {
						t.Error(err)
					}
				}
			}
			if err := l.Flush(ctx); err == nil {
				t.Fatal("no error from a failing store")
			}
			m.failAdd.Store(false)
			return 1
		}},
		{"a storm of distinct links, more than are remembered", func(t *testing.T, m *memLinks, l *share.Links) int64 {
			// As many followers as lookup slots (maxLookups): more would be
			// refused with ErrBusy whenever a loaded machine slows the
			// lookups past slotWait, which is the bound working, not a loss.
			const followers, each = 4, 6000
			var wg sync.WaitGroup
			for f := range followers {
				wg.Go(func() {
					for i := range each {
						if _, err := l.Follow(ctx, code(f*each+i), true); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			return followers * each
		}},
		{"an unknown code is asked for once", func(t *testing.T, m *memLinks, l *share.Links) int64 {
			m.missing = "Nope1234"
			for range 100 {
				if _, err := l.Follow(ctx, m.missing, true); !errors.Is(err, share.ErrNotFound) {
					t.Fatalf("%v, want ErrNotFound", err)
				}
			}
			if n := m.gets.Load(); n != 1 {
				t.Errorf("%d lookups, want 1", n)
			}
			return 0
		}},
		{"a flood of made-up codes answers busy soon", func(t *testing.T, m *memLinks, l *share.Links) int64 {
			m.delay = time.Second
			var wg sync.WaitGroup
			var busy atomic.Int64
			var slowest atomic.Int64
			for i := range 100 {
				wg.Go(func() {
					start := time.Now()
					_, err := l.Follow(ctx, "x"+code(i), false) // one too long: unknown
					if errors.Is(err, share.ErrBusy) {
						busy.Add(1)
						if d := int64(time.Since(start)); d > slowest.Load() {
							slowest.Store(d)
						}
					}
				})
			}
			wg.Wait()
			if busy.Load() == 0 {
				t.Error("no follower was answered busy")
			}
			if d := time.Duration(slowest.Load()); d > 500*time.Millisecond {
				t.Errorf("a busy answer took %v", d)
			}
			return 0
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMemLinks()
			l := share.NewLinks(m, quiet())
			want := tt.run(t, m, l)
			if err := l.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if got := m.total(); got != want {
				t.Errorf("%d clicks written, want %d", got, want)
			}
		})
	}
}
