package request

import (
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
	"time"

	"waitingroom/server/visitor"
)

// IdentityCookiePrefix starts the name of a room's identity cookie:
// "wr_vid_" and the room's name. It carries the visitor of the buyer's
// verified identity in that room (identity.Visitors), so that every
// device the identity was presented on is the same visitor there, and
// says that the identity was verified.
const IdentityCookiePrefix = "wr_vid_"

// identityPurpose keeps the identity cookie's MAC apart from the
// signer's other uses.
const identityPurpose = "identity"

// identityMessage is what the identity cookie's MAC covers: the room, the
// visitor, the cookie's end and the line the identity names, so that a
// cookie of one room says nothing in another, and ends. A cookie that
// names no line covers the first three alone.
func identityMessage(room, id string, until int64, line string) string {
	m := room + "\x00" + id + "\x00" + strconv.FormatInt(until, 10)
	if line != "" {
		m += "\x00" + line
	}
	return m
}

// IdentityVisitor returns the visitor of room's identity cookie when it
// is validly signed for room and has not ended at now.
func IdentityVisitor(r *http.Request, s *visitor.Signer, room string, now time.Time) (string, bool) {
	id, _, ok := IdentityOf(r, s, room, now)
	return id, ok
}

// IdentityOf returns the visitor of room's identity cookie and the line
// its identity names ("" for none), when the cookie is validly signed for
// room and has not ended at now. Its value is "visitor.until.mac", or
// "visitor.until.line.mac" with a line.
func IdentityOf(r *http.Request, s *visitor.Signer, room string, now time.Time) (id, line string, ok bool) {
	c, err := r.Cookie(IdentityCookiePrefix + room)
	if err != nil || len(c.Value) > 192 {
		return "", "", false
	}
	parts := strings.Split(c.Value, ".")
	if len(parts) == 4 {
		line = parts[2]
		if line == "" {
			return "", "", false
		}
	} else if len(parts) != 3 {
		return "", "", false
	}
	id, mac := parts[0], parts[len(parts)-1]
	until, err := strconv.ParseInt(parts[1], 10, 64)
	if !visitor.ValidID(id) || err != nil {
		return "", "", false
	}
	want := s.MAC(identityPurpose, identityMessage(room, id, until, line))
	if subtle.ConstantTimeCompare([]byte(mac), []byte(want)) != 1 || now.Unix() >= until {
		return "", "", false
	}
	return id, line, true
}

// SetIdentityCookie issues room's identity cookie for visitor id, whose
// identity names line ("" for none), for CookieMaxAge from now.
func SetIdentityCookie(w http.ResponseWriter, r *http.Request, s *visitor.Signer, room, id, line string, now time.Time) {
	until := now.Add(CookieMaxAge).Unix()
	value := id + "." + strconv.FormatInt(until, 10) + "."
	if line != "" {
		value += line + "."
	}
	http.SetCookie(w, &http.Cookie{
		Name:     IdentityCookiePrefix + room,
		Value:    value + s.MAC(identityPurpose, identityMessage(room, id, until, line)),
		Path:     "/",
		MaxAge:   int(CookieMaxAge.Seconds()),
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   Secure(r),
	})
}
