package gate

import (
	"net/http"
	"strings"
)

// sessionID returns the session id of this gate's room from the wr_gate
// cookie (value "<room>.<sessionID>").
func (g *Gate) sessionID(r *http.Request) (string, bool) {
	for _, c := range r.CookiesNamed(CookieName) {
		i := strings.LastIndexByte(c.Value, '.')
		if i < 0 || c.Value[:i] != g.opts.Room {
			continue
		}
		if id := c.Value[i+1:]; validSessionID(id) {
			return id, true
		}
	}
	return "", false
}

// validSessionID accepts base64url ids of 16 to 64 characters (waitingroom
// makes 22).
func validSessionID(id string) bool {
	if len(id) < 16 || len(id) > 64 {
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

// setCookie stores the session in wr_gate: HttpOnly, SameSite=Lax, Path=/,
// Secure when the shop is https (its Audience) or the request came over
// TLS, no Max-Age (waitingroom decides how long the session lives).
func (g *Gate) setCookie(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: g.opts.Room + "." + id, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: g.secure || r.TLS != nil,
	})
}

// clearCookie removes wr_gate.
func (g *Gate) clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: g.secure || r.TLS != nil,
	})
}
