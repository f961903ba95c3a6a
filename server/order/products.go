package order

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// ProductsTTL is how long a room's product list is served from memory.
const ProductsTTL = time.Second

// productsQueryTimeout bounds the one shared query of a refresh, which
// runs detached from the request that started it.
const productsQueryTimeout = 5 * time.Second

// maxCachedRooms is how many rooms' lists the cache holds before it drops
// the stale ones.
const maxCachedRooms = 1024

// productCache keeps each room's product list for ProductsTTL, and runs
// one query per room at a time: a flood of product reads or of invalid
// orders costs the database at most one query per room per ProductsTTL,
// so it cannot take the connections that orders need. The stock it shows
// may be up to ProductsTTL old; the order transaction has the last word.
type productCache struct {
	load  func(ctx context.Context, room string) ([]Product, error)
	ttl   time.Duration
	now   func() time.Time
	group singleflight.Group

	mu    sync.Mutex
	rooms map[string]cachedProducts
}

// cachedProducts is a room's list as read at at; a forgotten room keeps
// an entry without a list, so that a query that started before it was
// forgotten cannot put its older list back.
type cachedProducts struct {
	ps    []Product
	at    time.Time
	valid bool
}

func newProductCache(load func(ctx context.Context, room string) ([]Product, error), ttl time.Duration) *productCache {
	return &productCache{load: load, ttl: ttl, now: time.Now, rooms: make(map[string]cachedProducts)}
}

// get returns room's products, from memory when fresh. The slice is
// shared: callers must not modify it.
func (c *productCache) get(ctx context.Context, room string) ([]Product, error) {
	c.mu.Lock()
	e, ok := c.rooms[room]
	c.mu.Unlock()
	if ok && e.valid && c.fresh(e) {
		return e.ps, nil
	}
	ch := c.group.DoChan(room, func() (any, error) {
		// A reader that missed the cache while another's query ran may
		// get here after that query put its list: it takes that list.
		c.mu.Lock()
		e, ok := c.rooms[room]
		c.mu.Unlock()
		if ok && e.valid && c.fresh(e) {
			return e.ps, nil
		}
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), productsQueryTimeout)
		defer cancel()
		start := c.now()
		ps, err := c.load(qctx, room)
		if err != nil {
			return nil, err
		}
		c.put(room, cachedProducts{ps: ps, at: start, valid: true})
		return ps, nil
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.([]Product), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fresh reports whether e was read less than ttl ago.
func (c *productCache) fresh(e cachedProducts) bool { return c.now().Sub(e.at) < c.ttl }

func (c *productCache) put(room string, e cachedProducts) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.rooms) >= maxCachedRooms {
		for name, old := range c.rooms {
			if !c.fresh(old) {
				delete(c.rooms, name)
			}
		}
	}
	if old, ok := c.rooms[room]; ok && old.at.After(e.at) {
		return
	}
	c.rooms[room] = e
}

// forget drops room's list, so that the next read queries the database:
// after an order or a stock change on this instance.
func (c *productCache) forget(room string) {
	c.put(room, cachedProducts{at: c.now()})
	c.group.Forget(room)
}
