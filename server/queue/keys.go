package queue

import (
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
)

// MaxNamespaceLen bounds a deployment namespace.
const MaxNamespaceLen = 64

// ValidNamespace reports whether ns can prefix this deployment's keys and
// channels: 1 to 64 characters of A-Z, a-z, 0-9, ':', '_' and '-'. Braces
// are refused, so that a room's {name} stays the first hash tag of its keys,
// and so are glob characters, so that the events pattern matches this
// namespace only.
func ValidNamespace(ns string) bool {
	if len(ns) == 0 || len(ns) > MaxNamespaceLen {
		return false
	}
	for i := 0; i < len(ns); i++ {
		c := ns[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ':' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// DefaultNamespace returns the namespace of a deployment that sets none:
// "wr:db" and the Redis database number of rdb (0 on a Cluster). Pub/sub
// ignores the database number, so two deployments on databases 5 and 6 of
// one server get "wr:db5" and "wr:db6" and never hear each other.
func DefaultNamespace(rdb redis.UniversalClient) string {
	db := 0
	if c, ok := rdb.(*redis.Client); ok {
		db = c.Options().DB
	}
	return NamespaceForDB(db)
}

// NamespaceForDB returns the default namespace of Redis database db.
func NamespaceForDB(db int) string { return "wr:db" + strconv.Itoa(db) }

// keyNames are the keys of one room; a script declares the ones it touches
// in its "-- KEYS:" header, and Go passes exactly those in KEYS.
var keyNames = map[string]bool{
	"cfg":       true, // hash: the room's settings
	"seq":       true, // string: the ticket counter
	"queue":     true, // zset visitor → ticket: the line
	"head":      true, // string: the highest ticket popped
	"tokens":    true, // hash visitor → packed pass (see lib.lua)
	"active":    true, // zset visitor → pass expiry ms: passes holding a slot
	"done":      true, // zset visitor → expiry ms: consumed passes kept as tombstones
	"rate":      true, // hash: the issuer's credit and measured rate
	"tick":      true, // string: the tick sequence number
	"soldout":   true, // string: present when sold out
	"counts":    true, // hash: admitted, leaves, abandoned, expired, consumed, forfeited
	"departed":  true, // zset ticket → ticket: departures above the head
	"departing": true, // list: departures since the last tick's event
	"sweep":     true, // string: the abandonment sweep's cursor
	"seen":      true, // string: 2-byte liveness cells, one per ticket above seenbase
	"seenbase":  true, // string: the ticket that offset 0 of seen stands for
	"bucket":    true, // hash: the order endpoint's token bucket
	// DRAW: the pre-queue and its draw (see draw.go).
	"prequeue":  true, // zset visitor → pre-queue ticket, until the draw is done
	"withdrawn": true, // zset visitor → pre-queue ticket: left during the draw
	"draw":      true, // hash: seed, commit, state, base, n, written
	"drawlease": true, // string: the instance drawing, with a TTL
	"drawn":     true, // string: the drawn order, 4-byte big-endian tickets
	"nets":      true, // hash client network → pre-queue entries
	"pqline":    true, // hash visitor → their line (1..3) of a pre-queue entry in a line other than the first
	"pqn":       true, // hash line (1..3) → its pre-queue entries
	"ldrawn":    true, // string: a line's drawn block's pre-queue tickets, 4-byte big-endian, by number (rooms with lines)
	// ABSENCE: visitors passed over while away, and those who came back.
	"away":   true, // zset visitor → ms their return window ends: passed over while away
	"awaytk": true, // hash visitor → ticket of those in away
	"back":   true, // zset visitor → ticket: passed over, came back, admitted first
	// ATTRIBUTION: joins and admissions per campaign.
	"camps":    true, // hash campaign key → short id, at most MaxCampaigns (+ "(other)")
	"attr":     true, // hash "j<id>"/"a<id>" → joins/admissions; id 0 is direct
	"camp":     true, // string: 2-byte campaign id cells, one per ticket above campbase (like seen)
	"campbase": true, // string: the ticket that offset 0 of camp stands for
	"campof":   true, // hash visitor → campaign id, for a visitor passed over while away
	// The schedule phase an issuer last saw (see Engine.MarkPhase).
	"lastphase": true, // string: scheduled, prequeue, open or closed
	// GATE: passes handed to an outside shop, and their sessions.
	"jtis":     true, // hash pass id (jti) → "visitor token", until the pass (or its tombstone) goes
	"jtiof":    true, // hash visitor → their pass id: one per pass
	"sessions": true, // hash session id → "startedMs heldSinceMs subject jti"; its slot is active member "s:"+id
	// CHALLENGE: challenges issued, per network and in all, in
	// two fixed windows (see challenge.go), and the proofs of work used.
	"powcur":  true, // hash "#w" → window index, "+" → proved joins, "n<network>" → its challenges issued ("n~": networks past MaxChallengeNetworks)
	"powprev": true, // hash: powcur of the window before
	"powused": true, // zset proof id → ms its record may go
	// The no-JavaScript joins' bookings per network (see wait_slot.go).
	"waitslot": true, // zset network → ms its next join may be booked at
	// ADAPT: the adaptive controller's last decision (adapt.go).
	"adapt": true, // hash: n, ms, reason, from, rate, p95, err, samples, knee, cut, baseUs
	// list "ms from to p95 err samples reason": the decisions that changed the rate or the reason, newest first
	"adapthist": true,
	// BYPASS: the room's test links (bypass.go).
	"bypass": true, // hash link id → "uses used untilMs"
}

// maxLines is the most lines a room has (room.MaxLines). Line 0 keeps the
// room's own keys, so that a room without lines has the keys it always
// had; line i > 0 has its own copy of each of lineKeyNames, named
// "l<i>:<name>" (lineKey).
const maxLines = 4

// lineKeyNames are the keys each line of a room has one of: its tickets,
// its ranks' head and departures, its liveness and campaign cells, and
// its visitors passed over while away. A script declares them with a
// trailing "*" ("queue*") and gets every line's (see parseScript).
var lineKeyNames = map[string]bool{
	"seq": true, "queue": true, "head": true, "departed": true, "departing": true, "sweep": true, "ldrawn": true,
	"seen": true, "seenbase": true, "camp": true, "campbase": true, "away": true, "awaytk": true, "back": true,
}

// lineKey returns the name of line i's key called name: name itself for
// line 0.
func lineKey(i int, name string) string {
	if i == 0 {
		return name
	}
	return "l" + strconv.Itoa(i) + ":" + name
}

// validKeyName reports whether name is one of keyNames, or line i's copy
// of one of lineKeyNames.
func validKeyName(name string) bool {
	if keyNames[name] {
		return true
	}
	if len(name) > 3 && name[0] == 'l' && name[1] >= '1' && name[1] < '0'+maxLines && name[2] == ':' {
		return lineKeyNames[name[3:]]
	}
	return false
}

// keys names one room's Redis keys and channel. All keys share the hash
// tag {room}, so every script runs on one Redis Cluster node.
type keys struct {
	prefix string // <ns>:{room}:
	events string
}

func roomKeys(ns, name string) keys {
	p := ns + ":{" + name + "}:"
	return keys{prefix: p, events: p + "events"}
}

func (k keys) key(name string) string {
	if !validKeyName(name) {
		panic("queue: unknown room key " + name)
	}
	return k.prefix + name
}

// RoomKey returns the name of room's key called name in namespace ns: it
// carries the room's hash tag, so that it lives on the room's Cluster node.
// Other packages (livestats) build their per-room keys with it; name must
// not be one of the queue's own keys.
func RoomKey(ns, room, name string) string {
	if keyNames[name] {
		panic("queue: room key " + name + " belongs to the queue")
	}
	return roomKeys(ns, room).prefix + name
}

func roomsKey(ns string) string { return ns + ":rooms" }

// EventsChannel returns the pub/sub channel on which room's admission
// ticks are published in namespace ns.
func EventsChannel(ns, name string) string { return roomKeys(ns, name).events }

// EventsPattern matches the events channel of every room of namespace ns,
// and of no other namespace.
func EventsPattern(ns string) string { return ns + ":{*}:events" }

// RoomOfChannel returns the room whose events channel in namespace ns is
// ch, and false for any other channel, another namespace's included.
func RoomOfChannel(ns, ch string) (string, bool) {
	rest, ok := strings.CutPrefix(ch, ns+":{")
	if !ok {
		return "", false
	}
	name, ok := strings.CutSuffix(rest, "}:events")
	if !ok || !room.ValidName(name) {
		return "", false
	}
	return name, true
}
