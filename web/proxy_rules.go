package web

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"waitingroom/server/room"
)

// protectRule guards the paths under prefix for room: a request there
// needs a live wr_gate session of room.
type protectRule struct {
	prefix   string // lower case
	room     string
	failOpen bool
}

// protectTable is every room's protect prefixes, longest first (then by
// room name, so that two rooms naming one prefix always give the same).
type protectTable []protectRule

// newProtectTable builds the table from the rooms' settings.
func newProtectTable(rooms map[string]room.Settings) protectTable {
	var t protectTable
	for name, s := range rooms {
		for _, p := range s.Gate.Protect {
			if p == "" || p[0] != '/' {
				continue // room.Settings refuses them; an old record might not
			}
			t = append(t, protectRule{prefix: strings.ToLower(p), room: name, failOpen: s.Gate.FailOpen})
		}
	}
	slices.SortFunc(t, func(a, b protectRule) int {
		if c := cmp.Compare(len(b.prefix), len(a.prefix)); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.room, b.room), cmp.Compare(a.prefix, b.prefix))
	})
	return t
}

// match returns the rule of the longest prefix that urlPath falls under.
// The path is matched as the origin may read it: cleaned of "." and ".."
// segments and of doubled slashes, and without regard to ASCII case (an
// origin that ignores case must not serve "/Checkout" unguarded).
func (t protectTable) match(urlPath string) (protectRule, bool) {
	if len(t) == 0 {
		return protectRule{}, false
	}
	p := strings.ToLower(cleanPath(urlPath))
	for _, r := range t {
		if underPrefix(p, r.prefix) {
			return r, true
		}
	}
	return protectRule{}, false
}

// underPrefix reports whether p falls under prefix on a segment boundary:
// "/checkout" covers "/checkout", "/checkout/x" and "/checkout;x" (a path
// parameter, as some servers read it), never "/checkouts". A prefix
// ending in "/" covers everything below it.
func underPrefix(p, prefix string) bool {
	if !strings.HasPrefix(p, prefix) {
		return false
	}
	if len(p) == len(prefix) || strings.HasSuffix(prefix, "/") {
		return true
	}
	c := p[len(prefix)]
	return c == '/' || c == ';'
}

// cleanPath is path.Clean keeping a trailing slash ("/a/../b/" → "/b/").
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// ProtectRooms lists the rooms and reads their settings at once: the
// proxy's source of protect prefixes.
type ProtectRooms interface {
	Rooms(ctx context.Context) ([]string, error)
	RoomsSettings(ctx context.Context, names []string) (map[string]room.Settings, error)
}

// protectCache keeps the last protect table read from Redis, so that an
// outage keeps the last known one. A server that starts during an outage
// reads the database's record of the rooms instead (recorded), until
// Redis answers. ready is closed by the first load.
type protectCache struct {
	rooms    ProtectRooms
	recorded RecordedRooms // nil: none
	every    time.Duration

	// away is set while the last read failed: Redis is away.
	away atomic.Bool

	mu     sync.RWMutex
	table  protectTable
	loaded bool
	ready  chan struct{}
}

func newProtectCache(rooms ProtectRooms, recorded RecordedRooms, every time.Duration) *protectCache {
	return &protectCache{rooms: rooms, recorded: recorded, every: every, ready: make(chan struct{})}
}

// load reads every room's settings once and replaces the table. When
// Redis fails before any table is known, the database's record stands in.
func (c *protectCache) load(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	set, err := c.read(ctx)
	c.away.Store(err != nil)
	if err != nil {
		if c.known() || c.recorded == nil {
			return err
		}
		recs, rerr := c.recorded.Rooms(ctx)
		if rerr != nil {
			return fmt.Errorf("%w; proxy: read the rooms' record: %w", err, rerr)
		}
		set = make(map[string]room.Settings, len(recs))
		for _, r := range recs {
			set[r.Name] = r.Settings
		}
		c.replace(newProtectTable(set))
		return fmt.Errorf("%w (the database's record of %d rooms stands in)", err, len(recs))
	}
	c.replace(newProtectTable(set))
	return nil
}

// read reads every live room's settings from Redis.
func (c *protectCache) read(ctx context.Context) (map[string]room.Settings, error) {
	names, err := c.rooms.Rooms(ctx)
	if err != nil {
		return nil, fmt.Errorf("proxy: list rooms: %w", err)
	}
	set, err := c.rooms.RoomsSettings(ctx, names)
	if err != nil {
		return nil, fmt.Errorf("proxy: read rooms: %w", err)
	}
	return set, nil
}

func (c *protectCache) known() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.loaded
}

func (c *protectCache) replace(t protectTable) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.table = t
	if !c.loaded {
		c.loaded = true
		close(c.ready)
	}
}

// current returns the table, waiting up to wait (or ctx's end) for the
// first load; false when there is none yet.
func (c *protectCache) current(ctx context.Context, wait time.Duration) (protectTable, bool) {
	select {
	case <-c.ready:
	default:
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-c.ready:
		case <-ctx.Done():
			return nil, false
		case <-t.C:
			return nil, false
		}
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.table, true
}
