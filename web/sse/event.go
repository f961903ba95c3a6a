package sse

import (
	"strconv"

	"waitingroom/server/queue"
)

// heartbeatFrame is the beat: it keeps proxies from timing out, finds
// dead peers, and tells a counting page that the server still runs (a
// page stops counting when it hears nothing for push.Quiet). It is a
// named event with data, since EventSource dispatches no event without.
var heartbeatFrame = []byte("event: beat\ndata: 1\n\n")

// appendEvent appends one SSE event: an id when id > 0, the event name and
// the position JSON. The token is written only when the caller passes it,
// which is only for its own visitor.
func appendEvent(b []byte, id int64, name string, p queue.Position, tickMicros int64) []byte {
	if id > 0 {
		b = append(b, "id: "...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, '\n')
	}
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = appendPositionJSON(b, p, tickMicros)
	return append(b, '\n', '\n')
}

// appendPositionJSON writes the Position JSON of the HTTP contract, plus
// "t", the tick's server time in microseconds, by hand: it runs for every
// connection on every tick.
func appendPositionJSON(b []byte, p queue.Position, tickMicros int64) []byte {
	b = append(b, `{"status":"`...)
	b = append(b, p.Status...)
	b = append(b, '"')
	b = AppendPlace(b, p)
	b = append(b, `,"entryToken":`...)
	if p.EntryToken == nil {
		b = append(b, "null"...)
	} else {
		// Tokens are URL-safe base64 (checked by token.Valid upstream):
		// nothing to escape.
		b = append(b, '"')
		b = append(b, *p.EntryToken...)
		b = append(b, '"')
	}
	if p.SoldOut {
		b = append(b, `,"soldOut":true`...)
	} else {
		b = append(b, `,"soldOut":false`...)
	}
	// Paused, the pass's expiry, why a rank went up.
	if p.Paused {
		b = append(b, `,"paused":true`...)
	} else {
		b = append(b, `,"paused":false`...)
	}
	if p.PassExpiresAt != 0 {
		b = append(b, `,"passExpiresAt":`...)
		b = strconv.AppendInt(b, p.PassExpiresAt, 10)
	}
	if p.RankUpReason != "" {
		// The reasons are queue.RankUp* constants: nothing to escape.
		b = append(b, `,"rankUpReason":"`...)
		b = append(b, p.RankUpReason...)
		b = append(b, '"')
	}
	b = appendSchedule(b, p)
	b = append(b, `,"t":`...)
	b = strconv.AppendInt(b, tickMicros, 10)
	return append(b, '}')
}

// AppendPlace appends the fields that say where p stands, from "rank" to
// "pollingIntervalSeconds" and, in a room with lines, "line", in the
// contract's order: the JSON API and the
// SSE events both write them.
func AppendPlace(b []byte, p queue.Position) []byte {
	b = append(b, `,"rank":`...)
	b = strconv.AppendInt(b, p.Rank, 10)
	b = append(b, `,"ticket":`...)
	b = strconv.AppendInt(b, p.Ticket, 10)
	b = append(b, `,"currentTotalWaitingCount":`...)
	b = strconv.AppendInt(b, p.Waiting, 10)
	b = append(b, `,"estimatedWaitSeconds":`...)
	if p.EstimatedWaitSeconds == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *p.EstimatedWaitSeconds, 10)
	}
	b = append(b, `,"pollingIntervalSeconds":`...)
	b = strconv.AppendInt(b, int64(p.PollingIntervalSeconds), 10)
	if p.LineName != "" {
		// Line names are letters, digits, '-' and '_' (line.ValidName):
		// nothing to escape.
		b = append(b, `,"line":"`...)
		b = append(b, p.LineName...)
		b = append(b, '"')
	}
	return b
}
