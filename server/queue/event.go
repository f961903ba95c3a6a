package queue

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Event is what one admission tick publishes on the room's channel. It
// never carries a token.
type Event struct {
	// Tick is the room's tick sequence number.
	Tick int64 `json:"n"`
	// Head is the highest ticket admitted so far.
	Head int64 `json:"h"`
	// TimeMicros is the tick's Redis TIME, in microseconds.
	TimeMicros int64 `json:"t"`
	// Waiting is the length of the line after the tick.
	Waiting int64 `json:"w"`
	// Rate is the measured admission rate (or the configured one).
	Rate float64 `json:"r"`
	// Admitted are the visitors admitted by this tick.
	Admitted []string `json:"a"`
	// Departed are the tickets that left the line since the last tick.
	Departed []int64 `json:"d"`
}

// ParseEvent decodes an event published by the admission script. It
// returns an error for anything else.
func ParseEvent(b []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(b, &e); err != nil {
		return Event{}, fmt.Errorf("queue: parse event: %w", err)
	}
	if e.Tick <= 0 || e.Head < 0 || e.Waiting < 0 {
		return Event{}, errors.New("queue: parse event: fields out of range")
	}
	return e, nil
}
