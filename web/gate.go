package web

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/url"
	"strings"
	"sync"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
)

// Gates is the engine's gate mode as the HTTP handlers use it: passes that
// send a buyer on to an outside shop, and the sessions they open there.
type Gates interface {
	MintPass(ctx context.Context, roomName, visitor, tok, jti string) (time.Time, error)
	Redeem(ctx context.Context, roomName, jti, sessionID string) (queue.Session, error)
	TouchSession(ctx context.Context, roomName, sessionID string, renew bool) (queue.Session, error)
	EndSession(ctx context.Context, roomName, sessionID string) error
	ActiveSessions(ctx context.Context, roomName string) (int, error)
	// Namespace is the deployment's Redis namespace, which the pass's
	// subject hashes in (queue.Subject).
	Namespace() string
}

// GateCookie is the session cookie that the gate sets on the shop's host:
// "<room>.<sessionID>".
const GateCookie = "wr_gate"

// gateBodyMax bounds the bodies of the gate's endpoints (a pass is well
// under 1 KiB).
const gateBodyMax = 8 << 10

// gateOf is a room's gate as the handlers use it: the audience (the
// shop's origin) and the settings with their defaults filled in. on is
// false when the room sends buyers to no shop.
type gateOf struct {
	on             bool
	audience       string // scheme://host[:port] of TargetURL
	next           string // TargetURL's path and query
	shop           string // the shop's name: the branding's, else TargetURL's host
	sessionSeconds int
	sessionMode    string
	failOpen       bool
}

func gateSettings(set room.Settings) gateOf {
	g := gateOf{failOpen: set.Gate.FailOpen, audience: set.Gate.Audience()}
	g.sessionSeconds, g.sessionMode = set.Gate.Session()
	u, err := url.Parse(set.Gate.TargetURL)
	if g.audience == "" || err != nil {
		return g
	}
	g.on = true
	g.next = safeNext(u.RequestURI())
	g.shop = set.ShopName
	if g.shop == "" {
		g.shop = u.Hostname()
	}
	return g
}

// safeNext returns p when it is a path of this host: it begins with a
// single "/" (not "//", which a browser reads as another host, nor "/\"),
// and holds no control character; "/" otherwise.
func safeNext(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") ||
		len(p) > 2048 || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "/"
	}
	return p
}

// randomID returns n random bytes as unpadded base64url: a pass's jti and
// a session id are 16 bytes (22 characters).
func randomID(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// validSessionID reports whether id is 22 base64url characters.
func validSessionID(id string) bool {
	if len(id) != 22 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil
}

// gateFailOpen keeps each room's failOpen as last read, for /gate/check to
// answer when Redis cannot be reached: it is never emptied by a failed
// read, and refreshed in the background, off the check's path, once
// gateFailOpenAge old.
type gateFailOpen struct {
	mu      sync.Mutex
	rooms   map[string]gateFailOpenEntry
	reading map[string]bool
}

type gateFailOpenEntry struct {
	failOpen bool
	read     time.Time
}

const gateFailOpenAge = 30 * time.Second

// remember records room name's failOpen as read at now.
func (c *gateFailOpen) remember(name string, failOpen bool, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rooms == nil || len(c.rooms) > maxCachedPages {
		c.rooms = map[string]gateFailOpenEntry{}
	}
	c.rooms[name] = gateFailOpenEntry{failOpen: failOpen, read: now}
}

// get returns room name's last known failOpen: false, closed, when none
// is known.
func (c *gateFailOpen) get(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rooms[name].failOpen
}

// claimRefresh reports whether room name's entry is missing or older
// than gateFailOpenAge at now and nobody reads it yet: the caller then
// reads it, and calls doneReading.
func (c *gateFailOpen) claimRefresh(name string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.rooms[name]
	if (ok && now.Sub(e.read) < gateFailOpenAge) || c.reading[name] {
		return false
	}
	if c.reading == nil {
		c.reading = map[string]bool{}
	}
	c.reading[name] = true
	return true
}

func (c *gateFailOpen) doneReading(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.reading, name)
}

// refreshFailOpen reads room name's settings into the failOpen cache, in
// the background.
func (s *Server) refreshFailOpen(name string) {
	go func() {
		defer s.gateRooms.doneReading(name)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if set, err := s.rooms.Room(ctx, name); err == nil {
			s.gateRooms.remember(name, set.Gate.FailOpen, time.Now())
		}
	}()
}
