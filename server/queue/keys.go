package queue

// keys names every Redis key of one room. All of them share the hash tag
// {room}, so every multi-key script runs on Redis Cluster.
type keys struct {
	prefix   string // wr:{room}:
	cfg      string
	seq      string
	queue    string
	head     string
	rate     string
	active   string
	admitted string
	left     string
	consumed string
	forfeit  string
	departed string
	events   string
}

// roomsKey is the set of room names that the issuer loops walk.
const roomsKey = "wr:rooms"

func roomKeys(room string) keys {
	p := "wr:{" + room + "}:"
	return keys{
		prefix:   p,
		cfg:      p + "cfg",
		seq:      p + "seq",
		queue:    p + "queue",
		head:     p + "head",
		rate:     p + "rate",
		active:   p + "active",
		admitted: p + "admitted",
		left:     p + "left",
		consumed: p + "consumed",
		forfeit:  p + "forfeited",
		departed: p + "departed",
		events:   p + "events",
	}
}

func (k keys) token(visitor string) string { return k.prefix + "tok:" + visitor }

// EventsChannel returns the pub/sub channel on which a room's admission
// ticks are published.
func EventsChannel(room string) string { return roomKeys(room).events }
