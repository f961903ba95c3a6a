package share

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Links serves the short links: the Store, with what a click storm needs
// in front of it. A followed link is remembered (a known link still
// redirects while the database is away), concurrent lookups of one code
// share one query, lookups at once are bounded, and clicks are added up
// in memory and written by Run as one atomic UPDATE per link and flush.
type Links struct {
	st  *Store
	log *slog.Logger
	now func() time.Time

	lookups chan struct{} // a slot per database lookup under way
	group   singleflight.Group

	mu      sync.Mutex
	known   map[string]knownLink
	pending map[string]int64 // clicks not yet written, by code
}

type knownLink struct {
	link Link
	at   time.Time
}

// Tuning of Links.
const (
	// fresh is how long a looked-up link is used without asking the
	// database again (a link deleted on another instance still leads to
	// its room that long).
	fresh = 30 * time.Second
	// maxKnown bounds the remembered links.
	maxKnown = 10000
	// maxLookups bounds the database lookups under way at once, so that a
	// storm of unknown codes cannot take the order database's connections.
	maxLookups = 4
	// lookupTimeout bounds one database lookup, waiting for its slot
	// included.
	lookupTimeout = 3 * time.Second
	// FlushEvery is how often Run writes the clicks counted.
	FlushEvery = time.Second
)

// NewLinks returns the Links of st.
func NewLinks(st *Store, log *slog.Logger) *Links {
	return &Links{st: st, log: log, now: time.Now, lookups: make(chan struct{}, maxLookups),
		known: map[string]knownLink{}, pending: map[string]int64{}}
}

// Create records a new link (see Store.Create).
func (l *Links) Create(ctx context.Context, link Link) (Link, error) { return l.st.Create(ctx, link) }

// List returns room's links, newest first, with the clicks this process
// has counted and not yet written.
func (l *Links) List(ctx context.Context, room string) ([]Link, error) {
	ls, err := l.st.List(ctx, room)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	for i := range ls {
		ls[i].Clicks += l.pending[ls[i].Code]
	}
	l.mu.Unlock()
	return ls, nil
}

// Delete removes room's link of code and forgets it here.
func (l *Links) Delete(ctx context.Context, room, code string) (Link, error) {
	link, err := l.st.Delete(ctx, room, code)
	if err == nil {
		l.mu.Lock()
		delete(l.known, code)
		delete(l.pending, code)
		l.mu.Unlock()
	}
	return link, err
}

// Follow returns the link of code, and counts a click when click is set.
// A link known here is returned without asking the database for fresh
// seconds, and after that whenever the database fails. It returns
// ErrNotFound for an unknown code, ErrBusy when too many lookups are
// under way, or the database's error.
func (l *Links) Follow(ctx context.Context, code string, click bool) (Link, error) {
	l.mu.Lock()
	k, ok := l.known[code]
	l.mu.Unlock()
	if !ok || l.now().Sub(k.at) >= fresh {
		link, err := l.lookup(ctx, code)
		switch {
		case err == nil:
			k, ok = knownLink{link: link, at: l.now()}, true
			l.remember(code, k)
		case errors.Is(err, ErrNotFound):
			l.forget(code)
			return Link{}, err
		case !ok:
			return Link{}, err
		default:
			l.log.Warn("share: looking up a link failed: its remembered target is used", "code", code, "err", err)
		}
	}
	if click {
		l.mu.Lock()
		if _, still := l.known[code]; still {
			l.pending[code]++
		}
		l.mu.Unlock()
	}
	return k.link, nil
}

// lookup reads code's link from the database: one query per code at a
// time, at most maxLookups at once. The shared query does not end with
// the request that started it (the others wait on it too): it has
// lookupTimeout of its own.
func (l *Links) lookup(ctx context.Context, code string) (Link, error) {
	ch := l.group.DoChan(code, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lookupTimeout)
		defer cancel()
		select {
		case l.lookups <- struct{}{}:
		case <-ctx.Done():
			return Link{}, ErrBusy
		}
		defer func() { <-l.lookups }()
		return l.st.Get(ctx, code)
	})
	var res singleflight.Result
	select {
	case res = <-ch:
	case <-ctx.Done():
		return Link{}, ErrBusy
	}
	v, err := res.Val, res.Err
	if err != nil {
		return Link{}, err
	}
	return v.(Link), nil
}

func (l *Links) remember(code string, k knownLink) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.known[code]; !ok && len(l.known) >= maxKnown {
		for c := range l.known { // any one goes; the oldest is not worth a list
			if _, counting := l.pending[c]; !counting {
				delete(l.known, c)
				break
			}
		}
	}
	l.known[code] = k
}

func (l *Links) forget(code string) {
	l.mu.Lock()
	delete(l.known, code)
	delete(l.pending, code)
	l.mu.Unlock()
}

// Flush writes the clicks counted so far. Those it could not write are
// kept for the next flush; it returns the first error.
func (l *Links) Flush(ctx context.Context) error {
	l.mu.Lock()
	batch := l.pending
	l.pending = map[string]int64{}
	l.mu.Unlock()
	var first error
	failed := map[string]int64{}
	for code, n := range batch {
		if first != nil { // the database is away: do not wait on it for every link
			failed[code] = n
			continue
		}
		if err := l.st.AddClicks(ctx, code, n); err != nil {
			first = err
			failed[code] = n
		}
	}
	if len(failed) > 0 {
		l.mu.Lock()
		for code, n := range failed {
			if _, ok := l.known[code]; ok {
				l.pending[code] += n
			}
		}
		l.mu.Unlock()
	}
	return first
}

// Pending returns the clicks counted and not yet written, by code.
func (l *Links) Pending() map[string]int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.pending)
}

// Run flushes the clicks every FlushEvery until ctx ends, then once more.
func (l *Links) Run(ctx context.Context) {
	t := time.NewTicker(FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			if err := l.Flush(fctx); err != nil {
				l.log.Warn("share: writing the last clicks failed", "err", err)
			}
			return
		case <-t.C:
			fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if err := l.Flush(fctx); err != nil {
				l.log.Warn("share: writing clicks failed; they are kept for the next try", "err", err)
			}
			cancel()
		}
	}
}
