package console

import (
	"net/http"
	"strings"
	"time"

	"waitingroom/views"
)

// The console shows and reads times in the operator's time zone: the
// "tz" query parameter (an IANA name such as "Europe/Paris"), Asia/Seoul
// by default.

// defaultZone is the console's time zone when the operator names none.
const defaultZone = "Asia/Seoul"

// maxZoneName bounds a tz parameter.
const maxZoneName = 64

// seoulZone is Asia/Seoul, which has had no daylight saving time since
// 1988: a fixed +09:00 when the host has no zone database.
func seoulZone() *time.Location {
	if loc, err := time.LoadLocation(defaultZone); err == nil {
		return loc
	}
	return time.FixedZone("KST", 9*60*60)
}

// consoleZone returns the time zone r asks for and its name; ok is false
// for a name that is not a known zone.
func consoleZone(r *http.Request) (loc *time.Location, name string, ok bool) {
	name = r.URL.Query().Get("tz")
	if name == "" || name == defaultZone {
		return seoulZone(), defaultZone, true
	}
	if !validZoneName(name) {
		return seoulZone(), defaultZone, false
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return seoulZone(), defaultZone, false
	}
	return loc, name, true
}

// validZoneName reports whether name has the shape of an IANA zone name
// ("UTC", "America/Argentina/Buenos_Aires", "Etc/GMT+9"): never a path
// that leaves the zone database.
func validZoneName(name string) bool {
	if len(name) == 0 || len(name) > maxZoneName || strings.Contains(name, "..") ||
		name[0] == '/' || name[len(name)-1] == '/' || name == "Local" {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '/' || c == '_' || c == '-' || c == '+') {
			return false
		}
	}
	return true
}

// zoneLabel names loc for the page: "Asia/Seoul (UTC+09:00)".
func zoneLabel(name string, loc *time.Location) string {
	return name + " (" + views.UTCOffset(time.Now().In(loc)) + ")"
}

// DatetimeLocal is the value layout of an <input type="datetime-local">,
// with and without seconds.
const (
	DatetimeLocal        = "2006-01-02T15:04"
	datetimeLocalSeconds = "2006-01-02T15:04:05"
)

// parseLocalTime reads a datetime-local value in loc; "" is the zero time.
func parseLocalTime(v string, loc *time.Location) (time.Time, bool) {
	if v == "" {
		return time.Time{}, true
	}
	if len(v) > len(datetimeLocalSeconds)+4 { // seconds with milliseconds at most
		return time.Time{}, false
	}
	for _, layout := range []string{DatetimeLocal, datetimeLocalSeconds, datetimeLocalSeconds + ".000"} {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil && t.Year() >= 2000 && t.Year() <= 9999 {
			return t, true
		}
	}
	return time.Time{}, false
}
