package gatemode

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"waitingroom/server/room"
)

// protectRule guards the paths under prefix for room: a request there
// needs a live wr_gate session of room.
type protectRule struct {
	prefix   string // folded (foldPath)
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
			t = append(t, protectRule{prefix: foldPath(p), room: name, failOpen: s.Gate.FailOpen})
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

// match returns the rule of the longest prefix that any of forms (from
// routedForms) falls under.
func (t protectTable) match(forms []string) (protectRule, bool) {
	for _, r := range t {
		for _, p := range forms {
			if underPrefix(p, r.prefix) {
				return r, true
			}
		}
	}
	return protectRule{}, false
}

// matchPath is match for one decoded path: its routed forms.
func (t protectTable) matchPath(urlPath string) (protectRule, bool) {
	if len(t) == 0 {
		return protectRule{}, false
	}
	return t.match(routedForms(urlPath))
}

// underPrefix reports whether p falls under prefix on a name boundary:
// "/checkout" covers "/checkout", "/checkout/x", "/checkout;x" (a path
// parameter), "/checkout.json" (a format suffix), "/checkout " and any
// other next character that cannot continue a name, never "/checkouts",
// "/checkout-help" or "/checkout_2". A prefix ending in "/" covers
// everything below it.
func underPrefix(p, prefix string) bool {
	if !strings.HasPrefix(p, prefix) {
		return false
	}
	if len(p) == len(prefix) || strings.HasSuffix(prefix, "/") {
		return true
	}
	c := p[len(prefix)]
	return !(c == '-' || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z')
}

// errBadPath refuses a request path before the proxy (400): no router
// reads it one way only.
var errBadPath = errors.New("proxy: the path is encoded ambiguously")

// checkPath refuses u's path when routers may read it apart from the
// gate: an encoded slash or backslash in the path as sent or as
// forwarded, a backslash at all, a "%" left after decoding (double
// encoding), a control character (NUL, tab, newline), or bytes that are
// not UTF-8 (the overlong "%c0%af" for "/").
func checkPath(u *url.URL) error {
	if encodedSlash(u.RawPath) || encodedSlash(u.EscapedPath()) {
		return errBadPath
	}
	if strings.ContainsAny(u.Path, "\\%") || !utf8.ValidString(u.Path) {
		return errBadPath
	}
	for _, r := range u.Path {
		if unicode.IsControl(r) {
			return errBadPath
		}
	}
	return nil
}

// encodedSlash reports a "%2f" or "%5c" in escaped, in either case.
func encodedSlash(escaped string) bool {
	for i := 0; i+2 < len(escaped); i++ {
		if escaped[i] != '%' {
			continue
		}
		c := escaped[i+2] | 0x20
		if escaped[i+1] == '2' && c == 'f' || escaped[i+1] == '5' && c == 'c' {
			return true
		}
	}
	return false
}

// routedForms returns the folded forms (foldPath) under which a router
// may route the decoded path p, doubled slashes collapsed: with its
// "." and ".." segments resolved and kept, and with ";" path parameters
// cut from every segment (as servlet containers do before they resolve
// dot segments: "/..;/checkout") and kept. The gate guards a request
// when any form falls under a prefix.
func routedForms(p string) []string {
	params := strings.Contains(p, ";")
	dots := strings.Contains(p, ".")
	forms := make([]string, 0, 4)
	for _, cut := range []bool{false, true} {
		if cut && !params {
			break
		}
		q := p
		if cut {
			q = cutParams(q)
		}
		forms = append(forms, foldPath(collapseSlashes(q)))
		if dots {
			forms = append(forms, foldPath(cleanPath(q)))
		}
	}
	return forms
}

// cutParams cuts each segment's ";" parameters: "/a;x/b;y=1" → "/a/b".
func cutParams(p string) string {
	var b strings.Builder
	b.Grow(len(p))
	for p != "" {
		seg, rest, more := strings.Cut(p, "/")
		seg, _, _ = strings.Cut(seg, ";")
		b.WriteString(seg)
		if more {
			b.WriteByte('/')
		}
		p = rest
	}
	return b.String()
}

// collapseSlashes makes p start with one "/" and turns every run of "/"
// into one.
func collapseSlashes(p string) string {
	if !strings.Contains(p, "//") && strings.HasPrefix(p, "/") {
		return p
	}
	var b strings.Builder
	b.Grow(len(p) + 1)
	b.WriteByte('/')
	last := byte('/')
	for i := range len(p) {
		if c := p[i]; c != '/' || last != '/' {
			b.WriteByte(c)
			last = c
		}
	}
	return b.String()
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

// foldPath maps p's every letter to one of its case forms, so that two
// paths any router takes as equal ignoring case fold alike: ASCII case,
// and the Unicode letters that case-insensitive matchers take for ASCII
// ones ("ſ" for "s", the Kelvin sign for "k", "ı" and "İ" for "i").
func foldPath(p string) string {
	ascii := true
	for i := 0; i < len(p); i++ {
		if p[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(p)
	}
	return strings.Map(foldRune, p)
}

// foldRune is r's folded form: the least rune of the simple case-folding
// orbit of lower(upper(r)), mapped to lower case when it is ASCII.
func foldRune(r rune) rune {
	r = unicode.ToLower(unicode.ToUpper(r))
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	if least < utf8.RuneSelf {
		return unicode.ToLower(least)
	}
	return least
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
