package room

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestScheduleValidate(t *testing.T) {
	at := func(h int) *time.Time { v := time.Date(2026, 12, 1, h, 0, 0, 0, time.UTC); return &v }
	tests := []struct {
		name    string
		s       Schedule
		wantErr string
	}{
		{"none", Schedule{}, ""},
		{"all in order", Schedule{PrequeueAt: at(9), OpensAt: at(10), ClosesAt: at(11)}, ""},
		{"opening only", Schedule{OpensAt: at(10)}, ""},
		{"closing only", Schedule{ClosesAt: at(10)}, ""},
		{"pre-queue without opening", Schedule{PrequeueAt: at(9)}, "prequeueAt needs opensAt"},
		{"pre-queue after opening", Schedule{PrequeueAt: at(10), OpensAt: at(9)}, "prequeueAt must be before opensAt"},
		{"pre-queue at opening", Schedule{PrequeueAt: at(10), OpensAt: at(10)}, "prequeueAt must be before opensAt"},
		{"closing before opening", Schedule{OpensAt: at(10), ClosesAt: at(9)}, "opensAt must be before closesAt"},
		{"closing at opening", Schedule{OpensAt: at(10), ClosesAt: at(10)}, "opensAt must be before closesAt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Defaults("x")
			s.Schedule = tt.s
			err := s.Validate()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestModes(t *testing.T) {
	for _, m := range []string{"fifo", "random", "passthrough", "closed", "queue"} {
		s := Defaults("x")
		s.Mode = m
		if err := s.Validate(); err != nil {
			t.Errorf("mode %q: %v", m, err)
		}
	}
	s := Defaults("x")
	s.Mode = "lottery"
	if err := s.Validate(); err == nil {
		t.Error("mode lottery was accepted")
	}
	var p Patch
	if err := json.Unmarshal([]byte(`{"mode":"queue"}`), &p); err != nil {
		t.Fatal(err)
	}
	if got := p.Apply(Defaults("x")).Mode; got != ModeFIFO {
		t.Errorf("mode queue is stored as %q, want fifo", got)
	}
}

func TestSchedulePatch(t *testing.T) {
	base := Defaults("x")
	if !base.ServeLineAfterClose {
		t.Fatal("serveLineAfterClose defaults to false, want true")
	}
	var p Patch
	if err := json.Unmarshal([]byte(`{"opensAt":"2026-12-01T10:00:00+09:00","serveLineAfterClose":false}`), &p); err != nil {
		t.Fatal(err)
	}
	s := p.Apply(base)
	if s.OpensAt == nil || !s.OpensAt.Equal(time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)) || s.ServeLineAfterClose {
		t.Fatalf("after patch: %+v", s.Schedule)
	}
	var keep Patch
	if err := json.Unmarshal([]byte(`{"title":"t"}`), &keep); err != nil {
		t.Fatal(err)
	}
	if got := keep.Apply(s); got.OpensAt == nil {
		t.Error("a patch without opensAt cleared it")
	}
	var clear Patch
	if err := json.Unmarshal([]byte(`{"opensAt":null}`), &clear); err != nil {
		t.Fatal(err)
	}
	if got := clear.Apply(s); got.OpensAt != nil {
		t.Error("opensAt null did not clear it")
	}
	for _, bad := range []string{`{"opensAt":"tomorrow"}`, `{"opensAt":5}`, `{"opensAt":"2026-12-01 10:00"}`} {
		var q Patch
		if err := json.Unmarshal([]byte(bad), &q); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}
