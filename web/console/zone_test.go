package console

import (
	"net/http/httptest"
	"testing"
	"time"
)

func TestConsoleZone(t *testing.T) {
	for _, tt := range []struct {
		tz, name string
		ok       bool
	}{
		{"", "Asia/Seoul", true},
		{"Asia/Seoul", "Asia/Seoul", true},
		{"UTC", "UTC", true},
		{"Europe/Paris", "Europe/Paris", true},
		{"America/Argentina/Buenos_Aires", "America/Argentina/Buenos_Aires", true},
		{"Etc/GMT+9", "Etc/GMT+9", true},
		{"Mars/Olympus", "Asia/Seoul", false},
		{"Local", "Asia/Seoul", false},
		{"../../../etc/passwd", "Asia/Seoul", false},
		{"/etc/localtime", "Asia/Seoul", false},
		{"Europe/Paris/", "Asia/Seoul", false},
		{"Asia/Seoul\x00", "Asia/Seoul", false},
		{"Europe/Pa ris", "Asia/Seoul", false},
		{"Europe/" + string(make([]byte, 70)), "Asia/Seoul", false},
	} {
		r := httptest.NewRequest("GET", "/admin/audit", nil)
		q := r.URL.Query()
		q.Set("tz", tt.tz)
		r.URL.RawQuery = q.Encode()
		loc, name, ok := consoleZone(r)
		if name != tt.name || ok != tt.ok || loc == nil {
			t.Errorf("tz %q: %v %q %v, want %q %v", tt.tz, loc, name, ok, tt.name, tt.ok)
		}
	}
	r := httptest.NewRequest("GET", "/admin/audit", nil)
	if loc, _, _ := consoleZone(r); zoneLabel("Asia/Seoul", loc) != "Asia/Seoul (UTC+09:00)" {
		t.Errorf("Seoul is %s", zoneLabel("Asia/Seoul", loc))
	}
}

func TestParseLocalTime(t *testing.T) {
	seoul := seoulZone()
	for _, tt := range []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"", time.Time{}, true},
		{"2026-11-27T10:00", time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC), true},
		{"2026-11-27T10:00:30", time.Date(2026, 11, 27, 1, 0, 30, 0, time.UTC), true},
		{"2026-11-27T10:00:30.000", time.Date(2026, 11, 27, 1, 0, 30, 0, time.UTC), true},
		{"2026-11-27 10:00", time.Time{}, false},
		{"2026-11-27", time.Time{}, false},
		{"2026-13-01T00:00", time.Time{}, false},
		{"1999-12-31T23:59", time.Time{}, false},
		{"2026-11-27T10:00+09:00", time.Time{}, false},
		{"tomorrow", time.Time{}, false},
	} {
		got, ok := parseLocalTime(tt.in, seoul)
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("%q: %v %v, want %v %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
