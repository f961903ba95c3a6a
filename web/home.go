package web

import (
	"context"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"waitingroom/server/room"
	"waitingroom/views"
)

// Bounds on the front page's list: rooms read, rooms listed, how long the
// list is kept, how long one scan may take, how long a failed scan is
// answered from the last list (or with its error) before another, and the
// rooms' settings read in one round trip.
const (
	homeScan    = 1000
	homeMax     = 100
	homeTTL     = 10 * time.Second
	homeWithin  = 3 * time.Second
	homeFailTTL = 3 * time.Second
	homeReads   = 100
)

// listedRoom is one room of the front page.
type listedRoom struct {
	name string
	set  room.Settings
}

// homeCache keeps the listed rooms for homeTTL, so that the front page
// costs at most one scan of the rooms per homeTTL. Concurrent requests
// share one scan, each waiting only as long as its own context allows. A
// failed scan is remembered for homeFailTTL, and meanwhile the last good
// list, if any, is served.
type homeCache struct {
	group singleflight.Group
	now   func() time.Time

	mu         sync.Mutex
	rooms      []listedRoom
	good       bool      // rooms is a list scanned
	expires    time.Time // rooms is fresh until then
	failed     error     // the last scan's error, until failedThen
	failedThen time.Time
}

// newHomeCache returns an empty list that decides its freshness by now.
func newHomeCache(now func() time.Time) *homeCache { return &homeCache{now: now} }

// cached returns the list to answer with without scanning, if any.
func (c *homeCache) cached() (rooms []listedRoom, ok bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	switch {
	case c.good && now.Before(c.expires):
		return c.rooms, true, nil
	case c.failed != nil && now.Before(c.failedThen):
		if c.good {
			return c.rooms, true, nil
		}
		return nil, true, c.failed
	}
	return nil, false, nil
}

// listed returns the rooms whose settings say listed, in name order: at
// most homeMax of the first homeScan rooms.
func (s *Server) listed(ctx context.Context) ([]listedRoom, error) {
	c := s.front
	if rooms, ok, err := c.cached(); ok {
		return rooms, err
	}
	// The shared scan does not end with the request that started it: it
	// has homeWithin of its own.
	ch := c.group.DoChan("", func() (any, error) {
		if rooms, ok, err := c.cached(); ok { // another scan just ended
			return rooms, err
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), homeWithin)
		defer cancel()
		rooms, err := s.scanListed(sctx)
		c.mu.Lock()
		defer c.mu.Unlock()
		if err != nil {
			c.failed, c.failedThen = err, c.now().Add(homeFailTTL)
			if c.good {
				s.log.Warn("front page: listing the rooms failed; the last list is served", "err", err)
				return c.rooms, nil
			}
			return nil, err
		}
		c.rooms, c.good, c.expires, c.failed = rooms, true, c.now().Add(homeTTL), nil
		return rooms, nil
	})
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.([]listedRoom), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// scanListed reads the rooms' names, then their settings homeReads at a
// time (one round trip each), in name order, until homeMax listed ones are
// found.
func (s *Server) scanListed(ctx context.Context) ([]listedRoom, error) {
	names, err := s.rooms.Rooms(ctx)
	if err != nil {
		return nil, err
	}
	names = names[:min(len(names), homeScan)]
	var out []listedRoom
	for len(names) > 0 && len(out) < homeMax {
		batch := names[:min(len(names), homeReads)]
		names = names[len(batch):]
		sets, err := s.rooms.RoomsSettings(ctx, batch)
		if err != nil {
			return nil, err
		}
		for _, name := range batch {
			// A room deleted meanwhile is not there.
			if set, ok := sets[name]; ok && set.Listed && len(out) < homeMax {
				out = append(out, listedRoom{name: name, set: set})
			}
		}
	}
	return out, nil
}

// frontPage serves GET /: a redirect to LANDING_URL when it is set, else a
// small page listing the listed rooms.
func (s *Server) frontPage(w http.ResponseWriter, r *http.Request) {
	if s.landingURL != "" {
		w.Header().Set("Cache-Control", "public, max-age=300")
		http.Redirect(w, r, s.landingURL, http.StatusFound)
		return
	}
	t := messages(r)
	rooms, err := s.listed(r.Context())
	if err != nil {
		s.htmlFail(w, r, err, "")
		return
	}
	page := views.HomePage{T: t, Assets: s.pageAssets()}
	for _, lr := range rooms {
		hr := views.HomeRoom{Name: lr.name, Title: lr.set.Title, Shop: lr.set.ShopName}
		if hr.Title == "" {
			hr.Title = lr.name
		}
		if at := lr.set.OpensAt; at != nil && s.clock.Now().Before(*at) {
			hr.Opens = views.Fill(t.HomeOpens, "time", formatOpening(*at, t.Lang))
		}
		page.Rooms = append(page.Rooms, hr)
	}
	w.Header().Set("Cache-Control", "public, max-age=10")
	w.Header().Set("Vary", "Accept-Language")
	w.Header().Set("Content-Language", t.Lang)
	s.render(w, r, http.StatusOK, views.Home(page))
}
