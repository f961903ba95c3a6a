package web

import (
	"net/http"
	"strings"
)

// gateCookie is the gate's session cookie on the shop's host: its value
// is "<room>.<sessionID>".
const gateCookie = "wr_gate"

// gateSessionIDLen is the length of a session id: 16 random bytes in
// unpadded base64url.
const gateSessionIDLen = 22

// gateSessionOf returns the session id of roomName that r's wr_gate
// cookies carry (a browser may send more than one), or "" when none does.
// Only a well-formed id is returned, so junk never reaches Redis.
func gateSessionOf(r *http.Request, roomName string) string {
	for _, c := range r.CookiesNamed(gateCookie) {
		name, id, ok := strings.Cut(c.Value, ".")
		if ok && name == roomName && validSessionID(id) {
			return id
		}
	}
	return ""
}

// validSessionID reports whether id looks like a session id.
func validSessionID(id string) bool {
	if len(id) != gateSessionIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
