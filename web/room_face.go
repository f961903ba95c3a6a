package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"waitingroom/server/room"
	"waitingroom/views"
)

// roomFace is what every page of a room needs of its settings: the shop
// link of the error pages, the language of a request that names none, the
// favicon, and the title and branding of the error pages and the theme
// stylesheet, and the opening time of the default preview image. found is
// false for a room that does not exist; read is when the settings were
// read.
type roomFace struct {
	shopURL string
	lang    string
	favicon string
	title   string
	brand   room.Branding
	opensAt *time.Time
	// staff are the networks that skip the line (room.Bypass).
	staff   []netip.Prefix
	found   bool
	read    time.Time
	expires time.Time
}

func faceOf(set room.Settings, now time.Time) roomFace {
	return roomFace{shopURL: set.ShopURL, lang: set.DefaultLanguage, favicon: set.Favicon, title: set.Title,
		brand: set.Branding, opensAt: set.OpensAt, staff: set.StaffPrefixes(), found: true, read: now, expires: now.Add(faceCacheTTL)}
}

// faceFresh is how old a cached face may be to answer an address that
// does not match it (an outdated or made-up fingerprint) without reading
// the settings again: a flood of made-up addresses costs one read per
// room and second.
const faceFresh = time.Second

// currentFace returns room name's face when the cache holds one read less
// than faceFresh ago (or that no such room exists: found is false), else
// reads the settings and caches their face. It returns an error only when
// the settings cannot be read.
func (s *Server) currentFace(ctx context.Context, name string) (roomFace, error) {
	now := s.clock.Now()
	s.pages.mu.Lock()
	f, cached := s.pages.faces[name]
	s.pages.mu.Unlock()
	if cached && now.Sub(f.read) < faceFresh && now.Before(f.expires) {
		return f, nil
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	set, err := s.rooms.Room(ctx, name)
	switch {
	case errors.Is(err, room.ErrNotFound):
		s.rememberFace(name, roomFace{read: now, expires: now.Add(faceCacheTTL)})
		return roomFace{}, nil
	case err != nil:
		return roomFace{}, fmt.Errorf("read room %s: %w", name, err)
	}
	f = faceOf(set, now)
	s.rememberFace(name, f)
	return f, nil
}

// roomFace returns room name's face: from the cache, else from its
// settings; the zero face when there is no such room or the settings
// cannot be read (the page still answers, in English, without a shop
// link).
func (s *Server) roomFace(ctx context.Context, name string) roomFace {
	if !room.ValidName(name) {
		return roomFace{}
	}
	now := s.clock.Now()
	s.pages.mu.Lock()
	f, ok := s.pages.faces[name]
	s.pages.mu.Unlock()
	if ok && now.Before(f.expires) {
		return f
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	set, err := s.rooms.Room(ctx, name)
	switch {
	case errors.Is(err, room.ErrNotFound):
		s.rememberFace(name, roomFace{read: now, expires: now.Add(faceCacheTTL)}) // no such room: no read per refusal
		return roomFace{}
	case err != nil:
		return roomFace{}
	}
	f = faceOf(set, now)
	s.rememberFace(name, f)
	return f
}

func (s *Server) rememberFace(name string, f roomFace) {
	s.pages.mu.Lock()
	defer s.pages.mu.Unlock()
	if s.pages.faces == nil || len(s.pages.faces) > maxCachedPages {
		s.pages.faces = map[string]roomFace{}
	}
	s.pages.faces[name] = f
}

// roomText returns the texts of a page of room name: in the language the
// request names, else in the room's default language (a crawler names
// none), else in English.
func (s *Server) roomText(r *http.Request, name string) views.Messages {
	lang, named := views.Named(r.Header.Get("Accept-Language"))
	if named || name == "" {
		return views.For(lang)
	}
	return views.For(s.roomFace(r.Context(), name).lang)
}

// roomAssets returns the page assets of a page of a room whose favicon is
// favicon ("" for the site's).
func (s *Server) roomAssets(favicon string) views.Assets {
	a := s.pageAssets()
	a.Icon = favicon
	return a
}
