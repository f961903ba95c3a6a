package web

import (
	"testing"
	"time"

	"waitingroom/server/room"
)

// TestRoomFormShowsTheSavedSecond: the settings form shows a schedule's
// time to the minute, and to the second when it has seconds, so that a
// time set to the second is not shown up to 59 s early; the shown value
// reads back as the same second.
func TestRoomFormShowsTheSavedSecond(t *testing.T) {
	seoul, err := time.LoadLocation("Asia/Seoul")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		at   *time.Time
		want string
	}{
		{"none", nil, ""},
		{"on the minute", atPtr(time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)), "2026-12-01T10:00"},
		{"to the second", atPtr(time.Date(2026, 12, 1, 1, 0, 38, 0, time.UTC)), "2026-12-01T10:00:38"},
		{"to the millisecond", atPtr(time.Date(2026, 12, 1, 1, 0, 38, 250e6, time.UTC)), "2026-12-01T10:00:38"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set := room.Defaults("r")
			set.OpensAt = tt.at
			got := roomValues("r", set, "Asia/Seoul").OpensAt
			if got != tt.want {
				t.Fatalf("opensAt shown as %q, want %q", got, tt.want)
			}
			if tt.at == nil {
				return
			}
			layout := datetimeLocal
			if len(got) > len(layout) {
				layout += ":05"
			}
			back, err := time.ParseInLocation(layout, got, seoul)
			if err != nil || !back.Equal(tt.at.Truncate(time.Second)) {
				t.Fatalf("%q reads back as %v (%v), want %v", got, back, err, tt.at.Truncate(time.Second))
			}
		})
	}
}

func atPtr(t time.Time) *time.Time { return &t }
