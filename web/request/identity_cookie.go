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
// visitor and the cookie's end, so that a cookie of one room says nothing
// in another, and ends.
func identityMessage(room, id string, until int64) string {
	return room + "\x00" + id + "\x00" + strconv.FormatInt(until, 10)
}

// IdentityVisitor returns the visitor of room's identity cookie when it
// is validly signed for room and has not ended at now.
func IdentityVisitor(r *http.Request, s *visitor.Signer, room string, now time.Time) (string, bool) {
	c, err := r.Cookie(IdentityCookiePrefix + room)
	if err != nil || len(c.Value) > 128 {
		return "", false
	}
	id, rest, ok := strings.Cut(c.Value, ".")
	if !ok || !visitor.ValidID(id) {
		return "", false
	}
	untilText, mac, ok := strings.Cut(rest, ".")
	until, err := strconv.ParseInt(untilText, 10, 64)
	if !ok || err != nil {
		return "", false
	}
	want := s.MAC(identityPurpose, identityMessage(room, id, until))
	if subtle.ConstantTimeCompare([]byte(mac), []byte(want)) != 1 || now.Unix() >= until {
		return "", false
	}
	return id, true
}

// SetIdentityCookie issues room's identity cookie for visitor id, for
// CookieMaxAge from now.
func SetIdentityCookie(w http.ResponseWriter, r *http.Request, s *visitor.Signer, room, id string, now time.Time) {
	until := now.Add(CookieMaxAge).Unix()
	http.SetCookie(w, &http.Cookie{
		Name:     IdentityCookiePrefix + room,
		Value:    id + "." + strconv.FormatInt(until, 10) + "." + s.MAC(identityPurpose, identityMessage(room, id, until)),
		Path:     "/",
		MaxAge:   int(CookieMaxAge.Seconds()),
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
		Secure:   Secure(r),
	})
}
