package operator

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/hkdf"
)

// DeviceTTL is how long a device cookie names a trusted browser.
const DeviceTTL = 180 * 24 * time.Hour

// deviceInfo is the HKDF info string of the device cookies' key; changing
// it makes every device cookie unknown.
const deviceInfo = "waitingroom device cookie v1"

// deviceMax bounds a device cookie's value: a name of at most 64
// characters, a time, an id and a MAC.
const deviceMax = 200

// Devices signs and verifies device cookies: a browser that signed in to
// an operator's account once is given one, and its sign-ins to that
// account are then exempt from the lockout of the account's untrusted
// attempts. A cookie is "name:issued:id:mac", issued in Unix seconds, id
// 16 random bytes and mac the HMAC-SHA256 of the rest, both base64url.
type Devices struct {
	key []byte
}

// NewDevices derives the device cookies' HMAC key from the deployment's
// secret with HKDF-SHA256 (info "waitingroom device cookie v1"): every
// instance that shares the secret accepts the others' cookies.
func NewDevices(secret []byte) (*Devices, error) {
	if len(secret) == 0 {
		return nil, errors.New("operator: device key: empty secret")
	}
	k := make([]byte, 32)
	if _, err := io.ReadFull(hkdf.New(sha256.New, secret, nil, []byte(deviceInfo)), k); err != nil {
		return nil, fmt.Errorf("operator: device key: %w", err)
	}
	return &Devices{key: k}, nil
}

// Issue returns a new device cookie's value for the operator name, issued
// at now.
func (d *Devices) Issue(name string, now time.Time) string {
	id := make([]byte, 16)
	rand.Read(id) // never fails (crypto/rand)
	body := name + ":" + strconv.FormatInt(now.Unix(), 10) + ":" + base64.RawURLEncoding.EncodeToString(id)
	return body + ":" + base64.RawURLEncoding.EncodeToString(d.mac(body))
}

// Verify reports whether value is a device cookie this key signed for the
// operator name, issued less than DeviceTTL before now (and not after it);
// id names the cookie (its failures are counted under it). The MAC is
// compared in constant time.
func (d *Devices) Verify(value, name string, now time.Time) (id string, ok bool) {
	if len(value) > deviceMax {
		return "", false
	}
	body, sum, found := cutLast(value, ":")
	if !found {
		return "", false
	}
	mac, err := base64.RawURLEncoding.DecodeString(sum)
	if err != nil || !hmac.Equal(mac, d.mac(body)) {
		return "", false
	}
	parts := strings.Split(body, ":")
	if len(parts) != 3 || parts[0] != name {
		return "", false
	}
	sec, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return "", false
	}
	issued := time.Unix(sec, 0)
	if issued.After(now.Add(time.Minute)) || now.Sub(issued) >= DeviceTTL {
		return "", false
	}
	return parts[2], true
}

func (d *Devices) mac(body string) []byte {
	m := hmac.New(sha256.New, d.key)
	m.Write([]byte(body))
	return m.Sum(nil)
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}
