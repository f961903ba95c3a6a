package share

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"waitingroom/server/absent"
)

// LinkStore keeps the links (Store).
type LinkStore interface {
	Create(ctx context.Context, l Link) (Link, error)
	List(ctx context.Context, room string) ([]Link, error)
	Get(ctx context.Context, code string) (Link, error)
	Delete(ctx context.Context, room, code string) (Link, error)
	AddClicks(ctx context.Context, code string, n int64) error
}

// Links serves the short links: the Store, with what a click storm needs
// in front of it. A followed link is remembered (a known link still
// redirects while the database is away), a code found unknown is answered
// unknown for a while, concurrent lookups of one code share one query,
// lookups at once are bounded, and clicks are added up in memory and
// written by Run as one atomic UPDATE per link and flush. A click counted
// is kept until it is written, whatever links are remembered.
type Links struct {
	st      LinkStore
	log     *slog.Logger
	now     func() time.Time
	unknown *absent.Set // codes the database lately did not have

	lookups chan struct{} // a slot per database lookup under way
	group   singleflight.Group
	flush   sync.Mutex // one Flush at a time

	mu       sync.Mutex
	known    map[string]knownLink
	pending  map[string]int64 // clicks not yet written, by code
	flushing map[string]int64 // clicks being written by Flush, by code
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
	// slotWait is how long a lookup waits for a slot before the follower
	// is answered ErrBusy: a storm of unknown codes makes real followers
	// retry shortly rather than queue behind it.
	slotWait = 100 * time.Millisecond
	// lookupTimeout bounds one database query.
	lookupTimeout = 2 * time.Second
	// unknownFor is how long a code the database did not have is
	// answered ErrNotFound without asking it again (a new link's code is
	// drawn at random, so no one asks for it before it exists), and
	// maxUnknown bounds those codes.
	unknownFor = 30 * time.Second
	maxUnknown = 10000
	// FlushEvery is how often Run writes the clicks counted.
	FlushEvery = time.Second
)

// NewLinks returns the Links of st.
func NewLinks(st LinkStore, log *slog.Logger) *Links {
	return &Links{st: st, log: log, now: time.Now, lookups: make(chan struct{}, maxLookups),
		unknown: absent.New(unknownFor, maxUnknown),
		known:   map[string]knownLink{}, pending: map[string]int64{}, flushing: map[string]int64{}}
}

// Create records a new link (see Store.Create).
func (l *Links) Create(ctx context.Context, link Link) (Link, error) {
	link, err := l.st.Create(ctx, link)
	if err == nil {
		l.unknown.Forget(link.Code)
	}
	return link, err
}

// List returns room's links, newest first, with the clicks this process
// has counted and not yet written.
func (l *Links) List(ctx context.Context, room string) ([]Link, error) {
	ls, err := l.st.List(ctx, room)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	for i := range ls {
		ls[i].Clicks += l.pending[ls[i].Code] + l.flushing[ls[i].Code]
	}
	l.mu.Unlock()
	return ls, nil
}

// Delete removes room's link of code and forgets it here.
func (l *Links) Delete(ctx context.Context, room, code string) (Link, error) {
	link, err := l.st.Delete(ctx, room, code)
	if err == nil {
		l.forget(code)
		l.unknown.Add(code, l.now())
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
	if ok && l.now().Sub(k.at) < fresh {
		l.count(code, click)
		l.mu.Unlock()
		return k.link, nil
	}
	l.mu.Unlock()
	if l.unknown.Has(code, l.now()) {
		return Link{}, ErrNotFound
	}
	link, err := l.lookup(ctx, code)
	switch {
	case err == nil:
		k = knownLink{link: link, at: l.now()}
		l.mu.Lock()
		l.remember(code, k)
		l.count(code, click)
		l.mu.Unlock()
		return k.link, nil
	case errors.Is(err, ErrNotFound):
		l.forget(code)
		return Link{}, err
	case !ok:
		return Link{}, err
	}
	l.log.Warn("share: looking up a link failed: its remembered target is used", "code", code, "err", err)
	l.mu.Lock()
	l.count(code, click)
	l.mu.Unlock()
	return k.link, nil
}

// count adds a click to code's when click is set; l.mu is held.
func (l *Links) count(code string, click bool) {
	if click {
		l.pending[code]++
	}
}

// lookup reads code's link from the database: one query per code at a
// time, at most maxLookups at once, a slot waited for slotWait at most.
// The shared query does not end with the request that started it (the
// others wait on it too): it has lookupTimeout of its own. A code the
// database does not have is remembered as unknown.
func (l *Links) lookup(ctx context.Context, code string) (Link, error) {
	ch := l.group.DoChan(code, func() (any, error) {
		wait := time.NewTimer(slotWait)
		defer wait.Stop()
		select {
		case l.lookups <- struct{}{}:
		case <-wait.C:
			return Link{}, ErrBusy
		}
		defer func() { <-l.lookups }()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lookupTimeout)
		defer cancel()
		link, err := l.st.Get(ctx, code)
		if errors.Is(err, ErrNotFound) {
			l.unknown.Add(code, l.now())
		}
		return link, err
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

// remember keeps k as code's link, making room by forgetting another
// link (its clicks counted are kept: they do not depend on it); l.mu is
// held.
func (l *Links) remember(code string, k knownLink) {
	if _, ok := l.known[code]; !ok && len(l.known) >= maxKnown {
		for c := range l.known { // any one goes; the oldest is not worth a list
			delete(l.known, c)
			break
		}
	}
	l.known[code] = k
}

// forget drops code, which the database does not have (any more): its
// clicks not yet written would count for nothing.
func (l *Links) forget(code string) {
	l.mu.Lock()
	delete(l.known, code)
	delete(l.pending, code)
	l.mu.Unlock()
}

// Flush writes the clicks counted so far. Those it could not write are
// kept for the next flush; it returns the first error.
func (l *Links) Flush(ctx context.Context) error {
	l.flush.Lock()
	defer l.flush.Unlock()
	l.mu.Lock()
	batch := l.pending
	l.pending, l.flushing = map[string]int64{}, batch
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
	l.mu.Lock()
	for code, n := range failed {
		l.pending[code] += n
	}
	l.flushing = map[string]int64{}
	l.mu.Unlock()
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
