package room

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"
)

// Schedule is a sale's timetable. Before PrequeueAt nobody can join; from
// PrequeueAt to OpensAt buyers join the pre-queue; at OpensAt the
// pre-queue is drawn into the line and admission starts; from ClosesAt new
// joins are refused. Each time is optional (nil), but when set they are in
// that order, and a pre-queue needs an opening.
type Schedule struct {
	PrequeueAt *time.Time `json:"prequeueAt"`
	OpensAt    *time.Time `json:"opensAt"`
	ClosesAt   *time.Time `json:"closesAt"`
	// ServeLineAfterClose keeps admitting those already in line after
	// ClosesAt (the default); false stops admission at ClosesAt.
	ServeLineAfterClose bool `json:"serveLineAfterClose"`
}

// Validate returns an error that names the first invalid field.
func (s Schedule) Validate() error {
	switch {
	case s.PrequeueAt != nil && s.OpensAt == nil:
		return fieldError("prequeueAt", "prequeueAt needs opensAt: the pre-queue is drawn at opening")
	case s.PrequeueAt != nil && !s.PrequeueAt.Before(*s.OpensAt):
		return fieldError("prequeueAt", "prequeueAt must be before opensAt")
	case s.OpensAt != nil && s.ClosesAt != nil && !s.OpensAt.Before(*s.ClosesAt):
		return fieldError("closesAt", "opensAt must be before closesAt")
	case s.PrequeueAt != nil && s.ClosesAt != nil && !s.PrequeueAt.Before(*s.ClosesAt):
		return fieldError("closesAt", "prequeueAt must be before closesAt")
	}
	for _, t := range []*time.Time{s.PrequeueAt, s.OpensAt, s.ClosesAt} {
		if t != nil && (t.Year() < 2000 || t.Year() > 9999) {
			return fieldError("schedule", "schedule times must be between the years 2000 and 9999")
		}
	}
	return nil
}

// OptionalTime is a patch of an optional time: absent keeps the current
// value, null clears it, an RFC 3339 string sets it.
type OptionalTime struct {
	Set  bool
	Time *time.Time
}

// UnmarshalJSON reads null or an RFC 3339 string.
func (o *OptionalTime) UnmarshalJSON(b []byte) error {
	o.Set = true
	if bytes.Equal(b, []byte("null")) {
		o.Time = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("a schedule time must be an RFC 3339 string or null")
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return errors.New("a schedule time must be an RFC 3339 string such as 2026-12-01T10:00:00+09:00")
	}
	o.Time = &t
	return nil
}

// SchedulePatch is a partial update of Schedule.
type SchedulePatch struct {
	PrequeueAt          OptionalTime `json:"prequeueAt"`
	OpensAt             OptionalTime `json:"opensAt"`
	ClosesAt            OptionalTime `json:"closesAt"`
	ServeLineAfterClose *bool        `json:"serveLineAfterClose"`
}

func (p SchedulePatch) apply(s Schedule) Schedule {
	for _, f := range []struct {
		o   OptionalTime
		dst **time.Time
	}{{p.PrequeueAt, &s.PrequeueAt}, {p.OpensAt, &s.OpensAt}, {p.ClosesAt, &s.ClosesAt}} {
		if f.o.Set {
			*f.dst = f.o.Time
		}
	}
	set(&s.ServeLineAfterClose, p.ServeLineAfterClose)
	return s
}
