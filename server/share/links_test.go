package share_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"waitingroom/server/share"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestCodes(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		c := share.NewCode()
		if len(c) != share.CodeLen || !share.ValidCode(c) || seen[c] {
			t.Fatalf("code %q: not a fresh valid code", c)
		}
		seen[c] = true
	}
	for _, c := range []string{"", "abc", "abcdefghijklmnopq", "abcd-efg", "abcdéfgh", "abcd/../x", "AbCd1234"} {
		if got, want := share.ValidCode(c), c == "AbCd1234"; got != want {
			t.Errorf("ValidCode(%q) = %v", c, got)
		}
	}
}

func TestTarget(t *testing.T) {
	for _, tc := range []struct {
		l    share.Link
		want string
	}{
		{share.Link{Room: "spring"}, "/r/spring"},
		{share.Link{Room: "spring", Source: "kakao", Content: "banner 1", Term: "봄"},
			"/r/spring?utm_content=banner+1&utm_source=kakao&utm_term=" + url.QueryEscape("봄")},
		{share.Link{Room: "a", Source: "s", Medium: "m", Campaign: "c"}, "/r/a?utm_campaign=c&utm_medium=m&utm_source=s"},
	} {
		if got := tc.l.Target(); got != tc.want {
			t.Errorf("Target(%+v) = %q, want %q", tc.l, got, tc.want)
		}
	}
}

func TestLinks(t *testing.T) {
	for _, dialect := range []string{store.Postgres, store.SQLite} {
		t.Run(dialect, func(t *testing.T) {
			db := storetest.Migrated(t, dialect)
			ctx := context.Background()
			links := share.NewLinks(share.NewStore(db), quiet())
			a, err := links.Create(ctx, share.Link{Room: "spring", Source: "kakao", Medium: "social", Content: "봄 배너", CreatedBy: "alice"})
			if err != nil {
				t.Fatal(err)
			}
			b, err := links.Create(ctx, share.Link{Room: "spring", Source: "naver", CreatedBy: "bob"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := links.Create(ctx, share.Link{Room: "other", Source: "x"}); err != nil {
				t.Fatal(err)
			}
			got, err := links.List(ctx, "spring")
			if err != nil || len(got) != 2 {
				t.Fatalf("list: %+v %v", got, err)
			}
			codes := map[string]share.Link{got[0].Code: got[0], got[1].Code: got[1]}
			if g := codes[a.Code]; g.Content != "봄 배너" || g.CreatedBy != "alice" || g.Source != "kakao" || !g.CreatedAt.Equal(a.CreatedAt) {
				t.Fatalf("listed %+v, created %+v", g, a)
			}

			// Clicks: counted in memory, written by Flush, shown by List before.
			for range 3 {
				if l, err := links.Follow(ctx, a.Code, true); err != nil || l.Target() != a.Target() {
					t.Fatalf("follow: %+v %v", l, err)
				}
			}
			if _, err := links.Follow(ctx, b.Code, false); err != nil { // a HEAD: no click
				t.Fatal(err)
			}
			if ls, _ := links.List(ctx, "spring"); clicksOf(ls, a.Code) != 3 || clicksOf(ls, b.Code) != 0 {
				t.Fatalf("clicks before the flush: %+v", ls)
			}
			if err := links.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if stored, err := share.NewStore(db).Get(ctx, a.Code); err != nil || stored.Clicks != 3 {
				t.Fatalf("stored clicks: %+v %v", stored, err)
			}
			if _, err := links.Follow(ctx, "Nope12345", true); !errors.Is(err, share.ErrNotFound) {
				t.Fatalf("unknown code: %v", err)
			}

			// Deleting: only the room's own link, then gone.
			if _, err := links.Delete(ctx, "other", b.Code); !errors.Is(err, share.ErrNotFound) {
				t.Fatalf("delete from another room: %v", err)
			}
			if _, err := links.Delete(ctx, "spring", b.Code); err != nil {
				t.Fatal(err)
			}
			if _, err := links.Follow(ctx, b.Code, true); !errors.Is(err, share.ErrNotFound) {
				t.Fatalf("deleted code: %v", err)
			}

			// The cap.
			for i := range share.MaxPerRoom - 1 {
				if _, err := db.Exec(db.Rebind(`INSERT INTO share_links (code, room) VALUES (?, 'spring')`), fmt.Sprintf("fill%05d", i)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := links.Create(ctx, share.Link{Room: "spring"}); !errors.Is(err, share.ErrTooMany) {
				t.Fatalf("over the cap: %v", err)
			}

			// The database goes away: a known link still leads to its room
			// and its clicks wait; an unknown one is an error, not a 404.
			db.Close()
			later := time.Now().Add(time.Minute) // past what is fresh: the database is asked, and fails
			share.SetClock(links, func() time.Time { return later })
			if l, err := links.Follow(ctx, a.Code, true); err != nil || l.Room != "spring" {
				t.Fatalf("known link, database away: %+v %v", l, err)
			}
			if _, err := links.Follow(ctx, "Unknown99", true); err == nil || errors.Is(err, share.ErrNotFound) {
				t.Fatalf("unknown link, database away: %v", err)
			}
			if err := links.Flush(ctx); err == nil {
				t.Fatal("flush with the database away: no error")
			}
			if p := links.Pending(); p[a.Code] != 1 {
				t.Fatalf("clicks kept for the next flush: %v", p)
			}
		})
	}
}

func clicksOf(ls []share.Link, code string) int64 {
	for _, l := range ls {
		if l.Code == code {
			return l.Clicks
		}
	}
	return -1
}

// TestClickStorm: many followers of one link at once, the link not yet
// known here: every click counts, exactly, in one flush.
func TestClickStorm(t *testing.T) {
	db := storetest.Migrated(t, store.Postgres)
	ctx := context.Background()
	st := share.NewStore(db)
	l, err := st.Create(ctx, share.Link{Room: "storm", Source: "kakao"})
	if err != nil {
		t.Fatal(err)
	}
	links := share.NewLinks(st, quiet())
	const followers, each = 100, 50
	var wg sync.WaitGroup
	errs := make(chan error, followers)
	for range followers {
		wg.Go(func() {
			for range each {
				if _, err := links.Follow(ctx, l.Code, true); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := links.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Get(ctx, l.Code); err != nil || got.Clicks != followers*each {
		t.Fatalf("clicks %d %v, want %d", got.Clicks, err, followers*each)
	}
}

// TestNewestFirst: links made within one clock tick list newest first,
// on both databases, and codes leave out look-alike letters.
func TestNewestFirst(t *testing.T) {
	for _, tc := range []struct {
		dialect string
		n       int
	}{{store.Postgres, 6}, {store.SQLite, 6}} {
		t.Run(tc.dialect, func(t *testing.T) {
			db := storetest.Migrated(t, tc.dialect)
			ctx := context.Background()
			st := share.NewStore(db)
			tick := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
			share.SetStoreClock(st, func() time.Time { return tick })
			var made []string
			for i := range tc.n {
				l, err := st.Create(ctx, share.Link{Room: "spring", Source: fmt.Sprint("s", i)})
				if err != nil {
					t.Fatal(err)
				}
				if strings.ContainsAny(l.Code, "0Oo1lI") {
					t.Fatalf("code %q has a look-alike letter", l.Code)
				}
				made = append(made, l.Code)
			}
			got, err := st.List(ctx, "spring")
			if err != nil || len(got) != tc.n {
				t.Fatalf("list: %d %v", len(got), err)
			}
			for i, l := range got {
				if want := made[tc.n-1-i]; l.Code != want {
					t.Fatalf("position %d: %s (%s), want %s: not newest first", i, l.Code, l.Source, want)
				}
			}
		})
	}
}

// TestCodeAlphabet: many codes leave out 0 O o 1 l I and use the rest.
func TestCodeAlphabet(t *testing.T) {
	seen := map[rune]bool{}
	for range 2000 {
		for _, c := range share.NewCode() {
			seen[c] = true
		}
	}
	for _, tc := range []struct {
		letters string
		want    bool
	}{{"0Oo1lI", false}, {"23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz", true}} {
		for _, c := range tc.letters {
			if seen[c] != tc.want {
				t.Errorf("%q seen %v, want %v", c, seen[c], tc.want)
			}
		}
	}
}

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
