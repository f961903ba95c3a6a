package gatemode

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// gateRoomCache keeps of each gate room, as last read, what the shop-side
// checks need without a read of their own: its failOpen, for when Redis
// cannot be reached, and its audience's host, that a session cookie is
// bound to. An entry is never emptied by a failed read, and refreshed in
// the background, off the check's path, once gateRoomAge old. Every check
// reads it; only a save or a refresh writes it.
type gateRoomCache struct {
	mu      sync.RWMutex
	rooms   map[string]gateRoomEntry
	reading map[string]bool
}

type gateRoomEntry struct {
	failOpen bool
	host     string // the audience's host ("" for a room without a shop)
	read     time.Time
}

const gateRoomAge = 30 * time.Second

// maxCachedRooms bounds the cache: past it, it starts afresh.
const maxCachedRooms = 10000

// remember records room name's gate g as read at now.
func (c *gateRoomCache) remember(name string, g gateOf, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rooms == nil || len(c.rooms) > maxCachedRooms {
		c.rooms = map[string]gateRoomEntry{}
	}
	c.rooms[name] = gateRoomEntry{failOpen: g.failOpen, host: audienceHost(g.audience), read: now}
}

// get returns room name's last known failOpen: false, closed, when none
// is known.
func (c *gateRoomCache) get(name string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rooms[name].failOpen
}

// host returns the host of room name's shop as last read; known is false
// when the room was not read yet.
func (c *gateRoomCache) host(name string) (host string, known bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok := c.rooms[name]
	return e.host, ok
}

// roomsOf returns the known rooms whose shop is on host.
func (c *gateRoomCache) roomsOf(host string) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var names []string
	for name, e := range c.rooms {
		if e.host != "" && e.host == host {
			names = append(names, name)
		}
	}
	return names
}

// claimRefresh reports whether room name's entry is missing or older
// than gateRoomAge at now and nobody reads it yet: the caller then reads
// it, and calls doneReading.
func (c *gateRoomCache) claimRefresh(name string, now time.Time) bool {
	c.mu.RLock()
	e, ok := c.rooms[name]
	c.mu.RUnlock()
	if ok && now.Sub(e.read) < gateRoomAge {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok = c.rooms[name]
	if (ok && now.Sub(e.read) < gateRoomAge) || c.reading[name] {
		return false
	}
	if c.reading == nil {
		c.reading = map[string]bool{}
	}
	c.reading[name] = true
	return true
}

func (c *gateRoomCache) doneReading(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.reading, name)
}

// refreshGateRoom reads room name's settings into the cache, in the
// background.
func (gt *Gate) refreshGateRoom(name string) {
	go func() {
		defer gt.rooms.doneReading(name)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if set, err := gt.d.Rooms.Room(ctx, name); err == nil {
			gt.rooms.remember(name, gateSettings(set), time.Now())
		}
	}()
}

// gateRoomHost returns the host of room name's shop, read now (and
// remembered) when not known yet; err is the read's.
func (gt *Gate) gateRoomHost(ctx context.Context, name string) (string, error) {
	if h, ok := gt.rooms.host(name); ok {
		return h, nil
	}
	set, err := gt.d.Rooms.Room(ctx, name)
	if err != nil {
		return "", err
	}
	g := gateSettings(set)
	gt.rooms.remember(name, g, time.Now())
	return audienceHost(g.audience), nil
}

// audienceHost is the host[:port] of audience (scheme://host[:port], the
// default port already dropped by room.Gate.Audience).
func audienceHost(audience string) string {
	_, host, ok := strings.Cut(audience, "://")
	if !ok {
		return ""
	}
	return host
}

// shopHost is the host that r was sent to, as the shop's host: r.Host
// lower-cased, a default port (80, 443) dropped. Behind nginx it is the
// shop's host as nginx forwards it (proxy_set_header Host $host).
func shopHost(r *http.Request) string {
	h := strings.TrimSuffix(strings.ToLower(r.Host), ".")
	if name, port, err := net.SplitHostPort(h); err == nil && (port == "80" || port == "443") {
		h = name
		if strings.Contains(name, ":") {
			h = "[" + name + "]"
		}
	}
	return h
}
