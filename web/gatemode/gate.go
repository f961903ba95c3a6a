// Package gatemode is gate mode's server side: the passes that send a
// room's buyers on to an outside shop, the shop's API (redeem, renew,
// end, report) under the room's API key, the callback and the session
// check served on the shop's host, and the reverse proxy that guards a
// shop's protected paths.
package gatemode

import (
	"crypto/rand"
	"encoding/base64"
	"net/url"

	"waitingroom/gate"
	"waitingroom/server/room"
)

// GateCookie is the session cookie that the gate sets on the shop's host:
// "<room>.<sessionID>".
const GateCookie = "wr_gate"

// gateOf is a room's gate as the handlers use it: the audience (the
// shop's origin) and the settings with their defaults filled in. on is
// false when the room sends buyers to no shop.
type gateOf struct {
	on             bool
	audience       string // scheme://host[:port] of TargetURL
	next           string // TargetURL's path and query
	shop           string // the shop's name: the branding's, else TargetURL's host
	sessionSeconds int
	sessionMode    string
	failOpen       bool
}

func gateSettings(set room.Settings) gateOf {
	g := gateOf{failOpen: set.Gate.FailOpen, audience: set.Gate.Audience()}
	g.sessionSeconds, g.sessionMode = set.Gate.Session()
	u, err := url.Parse(set.Gate.TargetURL)
	if g.audience == "" || err != nil {
		return g
	}
	g.on = true
	g.next = gate.LocalPath(u.RequestURI())
	g.shop = set.ShopName
	if g.shop == "" {
		g.shop = u.Hostname()
	}
	return g
}

// randomID returns n random bytes as unpadded base64url: a pass's jti and
// a session id are 16 bytes (22 characters).
func randomID(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ValidSessionID reports whether id is 22 base64url characters.
func ValidSessionID(id string) bool {
	if len(id) != 22 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil
}
