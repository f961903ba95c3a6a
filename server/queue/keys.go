package queue

// keys names the Redis keys of one room that Go touches directly; the
// scripts derive the rest from the prefix. All of them share the hash tag
// {room}, so every script runs on Redis Cluster.
type keys struct {
	prefix string // wr:{room}:
	cfg    string
	events string
}

// roomsKey is the set of room names that the issuer loops walk.
const roomsKey = "wr:rooms"

func roomKeys(room string) keys {
	p := "wr:{" + room + "}:"
	return keys{prefix: p, cfg: p + "cfg", events: p + "events"}
}

func (k keys) key(name string) string      { return k.prefix + name }
func (k keys) token(visitor string) string { return k.prefix + "tok:" + visitor }
func (k keys) run(args ...any) ([]string, []any) {
	return []string{k.cfg}, append([]any{k.prefix}, args...)
}

// EventsChannel returns the pub/sub channel on which a room's admission
// ticks are published.
func EventsChannel(room string) string { return roomKeys(room).events }

// EventsPattern matches every room's events channel.
const EventsPattern = "wr:{*}:events"

// RoomOfChannel returns the room whose events channel is ch, and false for
// any other channel.
func RoomOfChannel(ch string) (string, bool) {
	const pre, suf = "wr:{", "}:events"
	if len(ch) <= len(pre)+len(suf) || ch[:len(pre)] != pre || ch[len(ch)-len(suf):] != suf {
		return "", false
	}
	return ch[len(pre) : len(ch)-len(suf)], true
}
