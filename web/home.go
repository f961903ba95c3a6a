package web

import (
	"context"
	"net/http"
	"sync"
	"time"

	"waitingroom/server/room"
	"waitingroom/views"
)

// Bounds on the front page's list: rooms read, rooms listed, and how long
// the list is kept.
const (
	homeScan   = 1000
	homeMax    = 100
	homeTTL    = 10 * time.Second
	homeWithin = 3 * time.Second
)

// listedRoom is one room of the front page.
type listedRoom struct {
	name string
	set  room.Settings
}

// homeCache keeps the listed rooms for homeTTL, so that the front page
// costs at most one scan of the rooms per homeTTL.
type homeCache struct {
	mu      sync.Mutex
	rooms   []listedRoom
	expires time.Time
}

// listed returns the rooms whose settings say listed, in name order: at
// most homeMax of the first homeScan rooms.
func (s *Server) listed(ctx context.Context) ([]listedRoom, error) {
	c := s.front
	c.mu.Lock() // one scan at a time; the others wait for its answer
	defer c.mu.Unlock()
	now := time.Now()
	if now.Before(c.expires) {
		return c.rooms, nil
	}
	ctx, cancel := context.WithTimeout(ctx, homeWithin)
	defer cancel()
	names, err := s.rooms.Rooms(ctx)
	if err != nil {
		return nil, err
	}
	var out []listedRoom
	for _, name := range names[:min(len(names), homeScan)] {
		set, err := s.rooms.Room(ctx, name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue // deleted meanwhile
		}
		if set.Listed {
			out = append(out, listedRoom{name: name, set: set})
			if len(out) == homeMax {
				break
			}
		}
	}
	c.rooms, c.expires = out, now.Add(homeTTL)
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
		if at := lr.set.OpensAt; at != nil && time.Now().Before(*at) {
			hr.Opens = views.Fill(t.HomeOpens, "time", formatOpening(*at, t.Lang))
		}
		page.Rooms = append(page.Rooms, hr)
	}
	w.Header().Set("Cache-Control", "public, max-age=10")
	w.Header().Set("Vary", "Accept-Language")
	w.Header().Set("Content-Language", t.Lang)
	s.render(w, r, http.StatusOK, views.Home(page))
}
