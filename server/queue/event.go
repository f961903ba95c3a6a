package queue

import (
	"encoding/json"
	"errors"
	"fmt"
)

// WakeMessage is what a room's channel carries, in place of an event,
// when the room slept and something woke it (see Admission's Asleep).
const WakeMessage = "wake"

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
	// Rate is the admission throughput a waiting visitor can count on: the
	// rate, or, when maxActive binds, the rate at which slots free up.
	Rate float64 `json:"r"`
	// Paused reports that admissions are stopped (JSON 1 or 0).
	Paused Flag `json:"p"`
	// Slots is when maxActive's slots free up; nil without maxActive.
	Slots *Slots `json:"S,omitempty"`
	// SoldOut reports that the room is sold out (JSON 1 or 0).
	SoldOut Flag `json:"s"`
	// Random reports that the room admits in mode random (JSON 1, or
	// absent): a waiting visitor's rank falls at their share of the rate.
	Random Flag `json:"rm"`
	// Admitted are the visitors admitted by this tick.
	Admitted []string `json:"a"`
	// Departed are the tickets that left the line since the last tick.
	Departed []int64 `json:"d"`
	// DRAW: Phase is the room's phase (see PhaseOpen...); the schedule's
	// times are unix ms, 0 when unset.
	Phase      string `json:"ph"`
	PrequeueAt int64  `json:"pq"`
	OpensAt    int64  `json:"op"`
	ClosesAt   int64  `json:"cl"`
	// Born is when the room was created, in unix ms (0: unknown; see
	// Position.Born).
	Born int64 `json:"c"`
	// Lines are each line's state in a room with lines, in the room's
	// order (nil without lines); Head and Departed are then the first
	// line's, and Waiting counts every line.
	Lines []LineState `json:"L,omitempty"`
	// ReadySpreadMs is the room's readySpreadMs: the turns of this tick's
	// admitted are told at random moments over this many milliseconds (0:
	// at once). Absent (nil) when the room follows the server's default.
	ReadySpreadMs *int `json:"rs,omitempty"`
}

// LineState is one line's part of an event: its head, waiting count,
// the throughput its share gets, and the tickets that left it since the
// last tick.
type LineState struct {
	Head     int64   `json:"h"`
	Waiting  int64   `json:"w"`
	Rate     float64 `json:"r"`
	Departed []int64 `json:"d"`
}

// Flag is a JSON 0 or 1.
type Flag bool

// UnmarshalJSON reads 0 or 1 (or a boolean). It returns an error for
// anything else.
func (f *Flag) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "1", "true":
		*f = true
	case "0", "false", "null":
		*f = false
	default:
		return fmt.Errorf("flag: %s is not 0 or 1", b)
	}
	return nil
}

// ParseEvent decodes an event published by the admission script. It
// returns an error for anything else.
func ParseEvent(b []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(b, &e); err != nil {
		return Event{}, fmt.Errorf("queue: parse event: %w", err)
	}
	if e.Tick <= 0 || e.Head < 0 || e.Waiting < 0 || e.ReadySpreadMs != nil && *e.ReadySpreadMs < 0 {
		return Event{}, errors.New("queue: parse event: fields out of range")
	}
	if len(e.Lines) > maxLines {
		return Event{}, errors.New("queue: parse event: too many lines")
	}
	for _, l := range e.Lines {
		if l.Head < 0 || l.Waiting < 0 {
			return Event{}, errors.New("queue: parse event: a line's fields out of range")
		}
	}
	return e, nil
}
