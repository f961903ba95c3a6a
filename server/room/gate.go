package room

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Gate is how a room guards an outside shop (gate mode): where READY
// buyers are sent with a pass, how long the session that a redeemed pass
// opens holds its slot, and what a guard does when the room cannot be
// reached.
type Gate struct {
	// TargetURL is the absolute http(s) URL of the shop page buyers are
	// sent to on READY; "" keeps the built-in order form.
	TargetURL string `json:"targetURL"`
	// SessionSeconds is how long a session lasts: without activity (idle)
	// or from its redeem (fixed). 0 means DefaultSessionSeconds.
	SessionSeconds int `json:"sessionSeconds"`
	// SessionMode is SessionIdle (renewed on activity; "" means it) or
	// SessionFixed (ends SessionSeconds after the redeem).
	SessionMode string `json:"sessionMode"`
	// FailOpen lets buyers through when the room cannot be reached; false
	// shows "please retry".
	FailOpen bool `json:"failOpen"`
	// Protect are the path prefixes ("/checkout") that need a session in
	// reverse-proxy mode.
	Protect []string `json:"protect"`
	// APIKeyHash is the hex SHA-256 of the room's API key, "" for none. It
	// is set by its own action, never by a settings patch, and never shown.
	APIKeyHash string `json:"apiKeyHash,omitempty"`
}

// The session modes.
const (
	SessionIdle  = "idle"
	SessionFixed = "fixed"
)

// Limits on the gate.
const (
	DefaultSessionSeconds = 600
	MinSessionSeconds     = 30
	MaxSessionSeconds     = 86400
	MaxTargetURLLen       = 2048
	MaxProtect            = 20
	MaxProtectLen         = 200
)

// DefaultGate returns the gate of a new room: off, with 600 s idle sessions
// and closed on failure.
func DefaultGate() Gate {
	return Gate{SessionSeconds: DefaultSessionSeconds, SessionMode: SessionIdle}
}

// Session returns SessionSeconds and SessionMode with their defaults
// filled in: DefaultSessionSeconds when 0, SessionIdle when "".
func (g Gate) Session() (seconds int, mode string) {
	seconds, mode = g.SessionSeconds, g.SessionMode
	if seconds == 0 {
		seconds = DefaultSessionSeconds
	}
	if mode == "" {
		mode = SessionIdle
	}
	return seconds, mode
}

// Audience returns the origin (scheme://host[:port]) of TargetURL, the
// audience of the room's passes, lower case and without the scheme's
// default port (https://shop.example:443 is https://shop.example); ""
// when the gate is off or TargetURL does not parse.
func (g Gate) Audience() string {
	if g.TargetURL == "" {
		return ""
	}
	u, err := url.Parse(g.TargetURL)
	if err != nil || u.Host == "" {
		return ""
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	switch scheme {
	case "https":
		host = strings.TrimSuffix(host, ":443")
	case "http":
		host = strings.TrimSuffix(host, ":80")
	}
	return scheme + "://" + host
}

// Validate returns an error that names the first invalid field.
func (g Gate) Validate() error {
	for _, f := range g.checks() {
		if err := f.check(); err != nil {
			return fieldError(f.field, "%s: %w", f.field, err)
		}
	}
	return nil
}

// FieldErrors returns the error of every invalid field, by the field's
// JSON name, so that a form can say them all at once; nil when none.
func (g Gate) FieldErrors() map[string]error {
	var out map[string]error
	for _, f := range g.checks() {
		if err := f.check(); err != nil {
			if out == nil {
				out = map[string]error{}
			}
			out[f.field] = err
		}
	}
	return out
}

// checks are the gate's field checks, in the form's order.
func (g Gate) checks() []fieldCheck {
	return []fieldCheck{
		{"targetURL", func() error { return checkTargetURL(g.TargetURL) }},
		{"sessionSeconds", func() error {
			if g.SessionSeconds != 0 && (g.SessionSeconds < MinSessionSeconds || g.SessionSeconds > MaxSessionSeconds) {
				return fmt.Errorf("must be between %d and %d", MinSessionSeconds, MaxSessionSeconds)
			}
			return nil
		}},
		{"sessionMode", func() error {
			if g.SessionMode != "" && g.SessionMode != SessionIdle && g.SessionMode != SessionFixed {
				return fmt.Errorf("must be %q (renewed on activity) or %q (from the redeem)", SessionIdle, SessionFixed)
			}
			return nil
		}},
		{"protect", func() error {
			if len(g.Protect) > MaxProtect {
				return fmt.Errorf("may list at most %d path prefixes", MaxProtect)
			}
			for _, p := range g.Protect {
				if err := checkProtect(p); err != nil {
					return fmt.Errorf("%q %w", cut(p, 80), err)
				}
			}
			return nil
		}},
		{"apiKeyHash", func() error {
			if g.APIKeyHash != "" && !isLowerHex(g.APIKeyHash, 64) {
				return errors.New("must be empty or a hex SHA-256")
			}
			return nil
		}},
	}
}

// checkTargetURL refuses anything but "" or an absolute http(s) URL with
// a host, no user, no fragment, of at most MaxTargetURLLen bytes.
func checkTargetURL(u string) error {
	if u == "" {
		return nil
	}
	if len(u) > MaxTargetURLLen || !utf8.ValidString(u) || strings.ContainsFunc(u, unicode.IsControl) {
		return fmt.Errorf("must be an absolute http(s) URL of at most %d bytes", MaxTargetURLLen)
	}
	p, err := url.Parse(u)
	switch {
	case err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.Opaque != "":
		return errors.New("must be an absolute http(s) URL such as https://shop.example/checkout")
	case p.User != nil:
		return errors.New("must not carry a user name or password")
	case p.Fragment != "" || strings.Contains(u, "#"):
		return errors.New("must not have a #fragment")
	}
	return nil
}

// checkProtect refuses a path prefix that does not start with one "/",
// is longer than MaxProtectLen bytes, climbs ("..") or carries a query,
// a fragment, white space, a backslash or a control character.
func checkProtect(p string) error {
	switch {
	case !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//"):
		return errors.New("must start with a single /")
	case len(p) > MaxProtectLen:
		return fmt.Errorf("must be at most %d bytes", MaxProtectLen)
	case strings.Contains(p, ".."):
		return errors.New("must not contain ..")
	case strings.ContainsAny(p, "?#"):
		return errors.New("must be a path, without a query or fragment")
	case !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) || r == '\\' }):
		return errors.New("must not contain spaces, backslashes or control characters")
	}
	return nil
}

func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// GatePatch is a partial update of Gate: nil fields keep their value. The
// API key's hash has no field: it changes only by its own action.
type GatePatch struct {
	TargetURL      *string   `json:"targetURL"`
	SessionSeconds *int      `json:"sessionSeconds"`
	SessionMode    *string   `json:"sessionMode"`
	FailOpen       *bool     `json:"failOpen"`
	Protect        *[]string `json:"protect"`
}

func (p GatePatch) apply(g Gate) Gate {
	set(&g.TargetURL, p.TargetURL)
	set(&g.SessionSeconds, p.SessionSeconds)
	set(&g.SessionMode, p.SessionMode)
	set(&g.FailOpen, p.FailOpen)
	set(&g.Protect, p.Protect)
	return g
}
