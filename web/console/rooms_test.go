package console

import (
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"
	"waitingroom/server/admin"
	"waitingroom/server/room"
	"waitingroom/views"
)

func TestActionWrite(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	open := room.Defaults("x")
	closed := open
	closed.Mode = room.ModeClosed
	drained := open
	drained.ClosesAt = &past
	opened := open
	opened.OpensAt = &past
	scheduled := open
	scheduled.OpensAt = &future
	for _, tc := range []struct {
		name, action string
		cur          room.Settings
		want         func(room.Settings) bool
		soldOut      *bool
		err          error
	}{
		{"pause", "pause", open, func(s room.Settings) bool { return s.Paused }, nil, nil},
		{"resume", "resume", open, func(s room.Settings) bool { return !s.Paused }, nil, nil},
		{"drain", "drain", open, func(s room.Settings) bool { return s.ClosesAt.Equal(now) && s.ServeLineAfterClose }, nil, nil},
		{"drain after opening", "drain", opened, func(s room.Settings) bool { return s.ClosesAt.Equal(now) && s.Validate() == nil }, nil, nil},
		{"drain keeps an earlier closing", "drain", drained, func(s room.Settings) bool { return s.ClosesAt.Equal(past) && s.ServeLineAfterClose }, nil, nil},
		{"drain before opening", "drain", scheduled, nil, nil, errDrainBeforeOpening},
		{"close", "close", open, func(s room.Settings) bool { return s.Mode == room.ModeClosed }, nil, nil},
		{"reopen closed", "reopen", closed, func(s room.Settings) bool { return s.Mode == room.ModeFIFO }, new(bool), nil},
		{"reopen drained", "reopen", drained, func(s room.Settings) bool { return s.ClosesAt == nil }, new(bool), nil},
		{"reopen keeps a future closing", "reopen", func() room.Settings { s := open; s.ClosesAt = &future; return s }(),
			func(s room.Settings) bool { return s.ClosesAt.Equal(future) }, new(bool), nil},
		{"unknown", "explode", open, nil, nil, errors.ErrUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := actionWrite(tc.action, tc.cur, now)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			got := w.Patch.Apply(tc.cur)
			if !tc.want(got) || got.Validate() != nil || w.Action != "room."+tc.action || !reflect.DeepEqual(w.SoldOut, tc.soldOut) || w.Exist != admin.MustExist {
				t.Fatalf("%+v, sold out %v, action %s (valid: %v)", got, w.SoldOut, w.Action, got.Validate())
			}
		})
	}
}

func TestSettingsFieldError(t *testing.T) {
	t.Parallel()
	en := roomsText(&http.Request{Header: http.Header{}})
	mapped := map[string]bool{}
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	before := at.Add(-time.Hour)
	for _, tc := range []struct {
		set   func(*room.Settings)
		field string
	}{
		{func(s *room.Settings) { s.Title = "a\x00" }, "title"},
		{func(s *room.Settings) { s.Rate = 0 }, "rate"},
		{func(s *room.Settings) { s.MaxActive = -1 }, "maxActive"},
		{func(s *room.Settings) { s.TokenTTLSeconds = 1 }, "tokenTTLSeconds"},
		{func(s *room.Settings) { s.OrderRate = 0 }, "orderRate"},
		{func(s *room.Settings) { s.OrderBurst = 0 }, "orderBurst"},
		{func(s *room.Settings) { s.AbandonAfterSeconds = 1 }, "abandonAfterSeconds"},
		{func(s *room.Settings) { s.ReturnWithinSeconds = 1 }, "returnWithinSeconds"},
		{func(s *room.Settings) { s.ShopURL = "ftp://x" }, "shopURL"},
		{func(s *room.Settings) { s.MaxPerBuyer = -1 }, "maxPerBuyer"},
		{func(s *room.Settings) { s.Mode = "x" }, "mode"},
		{func(s *room.Settings) { s.PrequeueAt = &at }, "prequeueAt"},
		{func(s *room.Settings) { s.PrequeueAt, s.OpensAt = &at, &before }, "prequeueAt"},
		{func(s *room.Settings) { s.OpensAt, s.ClosesAt = &at, &before }, "closesAt"},
		{func(s *room.Settings) { y := time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC); s.OpensAt = &y }, "schedule"},
		{func(s *room.Settings) { s.Challenge = "x" }, "challenge"},
		{func(s *room.Settings) { ms := room.MaxReadySpreadMs + 1; s.ReadySpreadMs = &ms }, "readySpreadMs"},
		{func(s *room.Settings) { s.Adapt.MinRate = -1 }, "minRate"},
		{func(s *room.Settings) { s.Adapt.MinRate, s.Adapt.MaxRate = 50, 40 }, "minRate"},
		{func(s *room.Settings) { s.Adapt.MaxRate = 0 }, "maxRate"},
		{func(s *room.Settings) { s.Adapt.TargetP95Ms = 0 }, "targetP95Ms"},
		{func(s *room.Settings) { s.Adapt.MaxErrorRate = 2 }, "maxErrorRate"},
		{func(s *room.Settings) { s.Adapt.HealthURL = "ftp://x" }, "healthURL"},
		{func(s *room.Settings) { s.Adapt.HealthURL = "http://169.254.169.254/health" }, "healthURL"},
		{func(s *room.Settings) { s.Gate.TargetURL = "ftp://x" }, "targetURL"},
		{func(s *room.Settings) { s.Gate.SessionSeconds = 1 }, "sessionSeconds"},
		{func(s *room.Settings) { s.Gate.SessionMode = "x" }, "sessionMode"},
		{func(s *room.Settings) { s.Gate.Protect = []string{"x"} }, "protect"},
	} {
		s := room.Defaults("x")
		tc.set(&s)
		err := s.Validate()
		if err == nil {
			t.Fatalf("%s: valid", tc.field)
		}
		field, msg := settingsFieldError(err, en)
		if field != tc.field || msg == "" || msg == err.Error() {
			t.Errorf("%v: field %q message %q, want field %q with its own words", err, field, msg, tc.field)
		}
		mapped[field] = true
	}
	// Every field the form has words for is one a refusal above maps to:
	// a field the rules name differently would show the rule's own text.
	for _, words := range []map[string]string{en.ErrSettings, en.ErrScheduleOrder, views.GateFormTextFor(en.Lang).Err} {
		for field := range words {
			if !mapped[field] {
				t.Errorf("no refusal of room.Settings.Validate maps to field %q", field)
			}
		}
	}
}

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
			got := RoomValues("r", set, "Asia/Seoul").OpensAt
			if got != tt.want {
				t.Fatalf("opensAt shown as %q, want %q", got, tt.want)
			}
			if tt.at == nil {
				return
			}
			layout := DatetimeLocal
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
