package gate

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
)

// cookieKeyInfo derives the cookie MAC key from the API key.
const cookieKeyInfo = "waitingroom gate cookie v1"

// macLen is the length of the cookie's MAC: 22 base64url characters, 132
// bits.
const macLen = 22

// cookieKey returns HMAC-SHA256(apiKey, cookieKeyInfo), the key of the
// cookie MACs.
func cookieKey(apiKey string) []byte {
	m := hmac.New(sha256.New, []byte(apiKey))
	m.Write([]byte(cookieKeyInfo))
	return m.Sum(nil)
}

// cookieMAC returns base64url(HMAC-SHA256(key, room+"."+id))[:22].
func (g *Gate) cookieMAC(id string) string {
	m := hmac.New(sha256.New, g.cookieKey)
	m.Write([]byte(g.opts.Room + "." + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))[:macLen]
}

// cookieValue is the wr_gate value of session id: "<room>.<id>.<mac>".
func (g *Gate) cookieValue(id string) string {
	return g.opts.Room + "." + id + "." + g.cookieMAC(id)
}

// sessionID returns the session id of this gate's room from the wr_gate
// cookie (value "<room>.<sessionID>.<mac>"). A cookie whose MAC does not
// verify (forged, or made under another API key) is no session: it costs
// no call to waitingroom.
func (g *Gate) sessionID(r *http.Request) (string, bool) {
	for _, c := range r.CookiesNamed(CookieName) {
		rest, mac, ok := cutLast(c.Value)
		if !ok || len(mac) != macLen {
			continue
		}
		room, id, ok := cutLast(rest)
		if !ok || room != g.opts.Room || !validSessionID(id) {
			continue
		}
		if subtle.ConstantTimeCompare([]byte(mac), []byte(g.cookieMAC(id))) == 1 {
			return id, true
		}
	}
	return "", false
}

// RetryCookieName is the cookie that a failed enter sets for the resend
// of the same pass: the seed of its session id, MAC'd for this room and
// pass, sent back to EnterPath only.
const RetryCookieName = "wr_gate_retry"

// enterSeed returns the seed that this browser's enter of pass jti
// derives its session id from: the one in its retry cookie when that was
// made for this room and pass (a resend after a failed answer), else 16
// fresh random bytes. No other cookie counts, so nobody can plant a seed
// in a victim's browser and so fix the id of the victim's session.
func (g *Gate) enterSeed(r *http.Request, jti string) (seed string, resent bool) {
	for _, c := range r.CookiesNamed(RetryCookieName) {
		seed, tag, ok := strings.Cut(c.Value, ".")
		if ok && validSessionID(seed) && subtle.ConstantTimeCompare([]byte(tag), []byte(g.retryTag(seed, jti))) == 1 {
			return seed, true
		}
	}
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:]), false
}

// retryTag binds seed to this room and pass jti.
func (g *Gate) retryTag(seed, jti string) string {
	m := hmac.New(sha256.New, g.cookieKey)
	m.Write([]byte("retry\x00" + g.opts.Room + "\x00" + seed + "\x00" + jti))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// setRetryCookie sets the retry cookie of seed and pass jti (maxAge -1
// clears it).
func (g *Gate) setRetryCookie(w http.ResponseWriter, r *http.Request, seed, jti string, maxAge int) {
	v := ""
	if maxAge > 0 {
		v = seed + "." + g.retryTag(seed, jti)
	}
	http.SetCookie(w, &http.Cookie{Name: RetryCookieName, Value: v, Path: EnterPath, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: g.secure || r.TLS != nil})
}

// sessionFor returns the session id that pass jti opens for the browser
// whose enter seed is seed: 16 bytes of HMAC-SHA256(cookie key, "session"
// NUL room NUL seed NUL jti), base64url (22 characters). The same browser
// resending the same pass asks waitingroom for the same id, so that the
// redeem is idempotent; another browser (another seed) asks for another
// and is refused; a new pass gets a new id, apart from the browser's live
// session, which it then replaces.
func (g *Gate) sessionFor(seed, jti string) string {
	m := hmac.New(sha256.New, g.cookieKey)
	m.Write([]byte("session\x00" + g.opts.Room + "\x00" + seed + "\x00" + jti))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// cutLast splits s around its last ".".
func cutLast(s string) (before, after string, ok bool) {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
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
		Name: CookieName, Value: g.cookieValue(id), Path: "/",
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
