package queue

import (
	"strconv"
	"time"

	"waitingroom/server/room"
)

// The phases of a room's schedule, as Position.Phase and the tick event
// report them: room's.
const (
	PhaseScheduled = room.PhaseScheduled
	PhasePrequeue  = room.PhasePrequeue
	PhaseOpen      = room.PhaseOpen
	PhaseClosed    = room.PhaseClosed
)

func unixMs(t *time.Time) string {
	if t == nil {
		return ""
	}
	return strconv.FormatInt(t.UnixMilli(), 10)
}

func fromUnixMs(s string) *time.Time {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil
	}
	t := time.UnixMilli(ms).UTC()
	return &t
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// msOrNil turns a unix-ms reply ("" or 0 when unset) into a JSON number or
// null.
func msOrNil(v any) *int64 {
	n := asInt(v)
	if n <= 0 {
		return nil
	}
	return &n
}
