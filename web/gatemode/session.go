package gatemode

import (
	"net/http"
	"strings"
)

// gateSessionOf returns the session id of roomName that r's wr_gate
// cookies carry (a browser may send more than one, on a shop guarded by
// several rooms), or "" when none does. Only a well-formed id is
// returned, so junk never reaches Redis.
func gateSessionOf(r *http.Request, roomName string) string {
	for _, c := range r.CookiesNamed(GateCookie) {
		name, id, ok := strings.Cut(c.Value, ".")
		if ok && name == roomName && ValidSessionID(id) {
			return id
		}
	}
	return ""
}
