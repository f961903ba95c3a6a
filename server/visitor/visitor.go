// Package visitor mints visitor ids and signs them for the wr_vid cookie.
//
// A visitor id is 128 random bits encoded as unpadded URL-safe base64 (22
// characters). The cookie value is "<id>.<mac>", where mac is the
// HMAC-SHA256 of the id under the server's secret key, so a client cannot
// choose or forge another visitor's identity.
package visitor

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strings"
	"sync"
)

// IDLen is the length of an encoded visitor id.
const IDLen = 22

// MaxCookieLen bounds the cookie value that Verify accepts.
const MaxCookieLen = IDLen + 1 + 43

var enc = base64.RawURLEncoding.Strict()

// NewID returns a fresh random visitor id. It returns an error only when the
// system's random source fails.
func NewID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("visitor: read random: %w", err)
	}
	return enc.EncodeToString(b[:]), nil
}

// ValidID reports whether id has the shape of a visitor id.
func ValidID(id string) bool {
	if len(id) != IDLen {
		return false
	}
	var b [17]byte
	n, err := enc.Decode(b[:], []byte(id))
	return err == nil && n == 16
}

// Signer signs and verifies visitor cookies with one secret key. It is safe
// for concurrent use.
type Signer struct {
	key []byte
	// macs are HMAC-SHA256 states under key, each with a scratch buffer,
	// reused across cookies: an HMAC's Reset returns it to the state
	// after the key without hashing the key again (every new
	// visitor's enter signs a cookie).
	macs sync.Pool
}

// macState is one reusable HMAC of a Signer, with room for what it hashes.
type macState struct {
	h   hash.Hash
	buf [len(cookieContext) + IDLen]byte
	sum [sha256.Size]byte
}

// cookieContext starts what the cookie's MAC covers ("wr_vid" NUL id),
// keeping it apart from MAC's tags.
const cookieContext = "wr_vid\x00"

// NewSigner returns a Signer for key. It returns an error when the key is
// shorter than 16 bytes.
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < 16 {
		return nil, errors.New("visitor: secret key must be at least 16 bytes")
	}
	s := &Signer{key: append([]byte(nil), key...)}
	s.macs.New = func() any { return &macState{h: hmac.New(sha256.New, s.key)} }
	return s, nil
}

func (s *Signer) mac(id string) string {
	return string(s.appendMAC(nil, id))
}

// appendMAC appends the cookie's MAC of id, base64url-encoded, to dst.
func (s *Signer) appendMAC(dst []byte, id string) []byte {
	m := s.macs.Get().(*macState)
	defer s.macs.Put(m)
	m.h.Reset()
	if len(id) <= IDLen {
		n := copy(m.buf[:], cookieContext)
		n += copy(m.buf[n:], id)
		m.h.Write(m.buf[:n])
	} else {
		m.h.Write([]byte(cookieContext))
		m.h.Write([]byte(id))
	}
	return enc.AppendEncode(dst, m.h.Sum(m.sum[:0]))
}

// MAC returns base64url(HMAC-SHA256(key, "mac:" purpose NUL msg)): a tag
// under the same secret for another use than the visitor cookie. The
// "mac:" prefix keeps every such tag apart from the cookie's ("wr_vid"
// NUL id), and purpose keeps the uses apart from one another.
func (s *Signer) MAC(purpose, msg string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte("mac:" + purpose))
	m.Write([]byte{0})
	m.Write([]byte(msg))
	return enc.EncodeToString(m.Sum(nil))
}

// Sign returns the cookie value for id.
func (s *Signer) Sign(id string) string {
	return string(s.AppendSign(make([]byte, 0, len(id)+1+enc.EncodedLen(sha256.Size)), id))
}

// AppendSign appends the cookie value for id (Sign's) to dst.
func (s *Signer) AppendSign(dst []byte, id string) []byte {
	dst = append(dst, id...)
	dst = append(dst, '.')
	return s.appendMAC(dst, id)
}

// Verify returns the visitor id carried by a cookie value, and false when the
// value is malformed or its signature does not match. The comparison runs in
// constant time.
func (s *Signer) Verify(value string) (string, bool) {
	if len(value) > MaxCookieLen {
		return "", false
	}
	id, mac, ok := strings.Cut(value, ".")
	if !ok || !ValidID(id) {
		return "", false
	}
	var want [MaxCookieLen - IDLen - 1]byte
	if !hmac.Equal([]byte(mac), s.appendMAC(want[:0], id)) {
		return "", false
	}
	return id, true
}
