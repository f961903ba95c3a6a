// Package share keeps the rooms' short links: /s/{code} leads to a room
// with the link's UTM values, and counts its clicks. Links live in the
// order database (PostgreSQL or the embedded SQLite), table share_links.
package share

import (
	"crypto/rand"
	"errors"
	"net/url"
	"time"
)

// Link is one short link of a room.
type Link struct {
	Code     string `db:"code"`
	Room     string `db:"room"`
	Source   string `db:"utm_source"`
	Medium   string `db:"utm_medium"`
	Campaign string `db:"utm_campaign"`
	Content  string `db:"utm_content"`
	Term     string `db:"utm_term"`
	// Clicks counts the link's followed redirects.
	Clicks    int64     `db:"clicks"`
	CreatedBy string    `db:"created_by"`
	CreatedAt time.Time `db:"created_at"`
}

// Query returns the link's non-empty utm_* values.
func (l Link) Query() url.Values {
	q := url.Values{}
	for _, kv := range [...][2]string{{"utm_source", l.Source}, {"utm_medium", l.Medium}, {"utm_campaign", l.Campaign},
		{"utm_content", l.Content}, {"utm_term", l.Term}} {
		if kv[1] != "" {
			q.Set(kv[0], kv[1])
		}
	}
	return q
}

// Target is the room's path with the link's UTM values: where /s/{code}
// leads.
func (l Link) Target() string { return l.TargetWith(nil) }

// TargetWith is Target with the values of extra the link does not set
// itself: the ad click ids and utm_* values an ad platform appended to
// the short link. The caller validates extra; the link's own values win.
func (l Link) TargetWith(extra url.Values) string {
	q := l.Query()
	for k, vs := range extra {
		if len(vs) > 0 && vs[0] != "" && q.Get(k) == "" {
			q.Set(k, vs[0])
		}
	}
	p := "/r/" + l.Room
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

// Errors of the store.
var (
	// ErrNotFound: no link has this code (in this room).
	ErrNotFound = errors.New("share: no such link")
	// ErrTooMany: the room has MaxPerRoom links already.
	ErrTooMany = errors.New("share: the room has too many links")
	// ErrBusy: too many lookups are under way; retry shortly.
	ErrBusy = errors.New("share: too many lookups under way")
)

// MaxPerRoom caps the links of one room.
const MaxPerRoom = 1000

// CodeLen is the length of a new code: 8 characters of alphabet, 46.5
// bits, so that codes cannot be enumerated cheaply.
const CodeLen = 8

// alphabet is the 56 letters of new codes: base62 without the ones that
// are easily confused when a code is read aloud or typed from print (0 O
// o, 1 l I).
const alphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz"

// NewCode returns a fresh random code of CodeLen characters of alphabet
// from crypto/rand.
func NewCode() string {
	out := make([]byte, 0, CodeLen)
	buf := make([]byte, 2*CodeLen)
	n := byte(len(alphabet))
	limit := 256 - 256%int(n) // 224 = 4 × 56: rejecting the rest keeps the letters uniform
	for len(out) < CodeLen {
		rand.Read(buf) // never fails (crypto/rand crashes the program instead)
		for _, b := range buf {
			if int(b) < limit && len(out) < CodeLen {
				out = append(out, alphabet[b%n])
			}
		}
	}
	return string(out)
}

// ValidCode reports whether s can be a code (6 to 16 base62 characters:
// codes made before alphabet left out look-alikes stay valid), so that
// nothing else reaches the database.
func ValidCode(s string) bool {
	if len(s) < 6 || len(s) > 16 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}
