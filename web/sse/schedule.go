package sse

import (
	"strconv"

	"waitingroom/server/push"
	"waitingroom/server/queue"
)

// appendSchedule writes the Position JSON's schedule fields: phase, the
// schedule's times (unix ms or null) and serverTime.
func appendSchedule(b []byte, p queue.Position) []byte {
	b = append(b, `,"phase":"`...)
	b = append(b, p.Phase...) // one of the queue.Phase constants: no escaping
	b = append(b, '"')
	for _, f := range []struct {
		name string
		v    *int64
	}{{`,"prequeueAt":`, p.PrequeueAt}, {`,"opensAt":`, p.OpensAt}, {`,"closesAt":`, p.ClosesAt}} {
		b = append(b, f.name...)
		if f.v == nil {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, *f.v, 10)
		}
	}
	b = append(b, `,"serverTime":`...)
	return strconv.AppendInt(b, p.ServerTime, 10)
}

// withSchedule fills p's schedule fields from the room's state: the phase
// and times of the newest tick, and the tick's server time.
func withSchedule(p queue.Position, st *push.State) queue.Position {
	p.Phase = st.Phase
	p.PrequeueAt, p.OpensAt, p.ClosesAt = msPtr(st.PrequeueAt), msPtr(st.OpensAt), msPtr(st.ClosesAt)
	p.ServerTime = st.TimeMicros / 1000
	return p
}

func msPtr(ms int64) *int64 {
	if ms <= 0 {
		return nil
	}
	return &ms
}

// lineOf returns the number ranks count from: the line number when the
// position has one, else its ticket, of the position's line
// (queue.LineTicket).
func lineOf(p queue.Position) int64 {
	if p.Line > 0 {
		return queue.LineTicket(p.LineIndex, p.Line)
	}
	return queue.LineTicket(p.LineIndex, p.Ticket)
}
