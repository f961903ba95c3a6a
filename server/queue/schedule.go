package queue

import (
	"strconv"
	"time"
)

// The phases of a room's schedule, as Position.Phase and the tick event
// report them.
const (
	// PhaseScheduled: before prequeueAt (or opensAt): nobody can join yet.
	PhaseScheduled = "scheduled"
	// PhasePrequeue: from prequeueAt until the draw at opensAt is done.
	PhasePrequeue = "prequeue"
	// PhaseOpen: joins go to the line and admission runs.
	PhaseOpen = "open"
	// PhaseClosed: after closesAt, or in mode closed: nobody joins.
	PhaseClosed = "closed"
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
