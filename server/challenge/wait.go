package challenge

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The no-JavaScript path: a visitor who cannot solve a challenge waits
// instead, as long as a phone would take to solve it, and then joins with a
// signed, timed wait token.

const (
	// PhoneHashRate is the hashes a second assumed of a mid-range phone's
	// browser on one worker: a quarter of headless Chromium's rate on one
	// core of this project's test machine (about 80,000).
	PhoneHashRate = 20_000
	// MinWait is the shortest wait of the no-JavaScript path.
	MinWait = 2 * time.Second
	// MaxWait bounds the wait, whatever the difficulty.
	MaxWait = 10 * time.Minute
	// WaitTTL is how long a wait token can be used once due.
	WaitTTL = TTL
	// MaxWaitTokenLen bounds the wait token that VerifyWait reads; a real
	// one is at most about 170 bytes.
	MaxWaitTokenLen = 256
	// waitVersion starts every wait token and its MAC's input.
	waitVersion = "w2"
)

// ErrEarly reports a genuine wait token before its NotBefore.
var ErrEarly = errors.New("wait token not due yet")

// ErrOtherNetwork reports a genuine wait token brought from another client
// network than the one it was given to.
var ErrOtherNetwork = errors.New("wait token of another network")

// WaitFor is how long a visitor without JavaScript waits instead of
// solving a challenge of maxNumber: the mean solve on the assumed phone
// (maxNumber/2 hashes at PhoneHashRate), at least MinWait and at most
// MaxWait.
func WaitFor(maxNumber int64) time.Duration {
	d := time.Duration(float64(maxNumber) / 2 / PhoneHashRate * float64(time.Second))
	return min(max(d, MinWait), MaxWait)
}

// Wait is a wait token's content: the visitor may join Room from client
// network Net ("" if unknown) from NotBefore until Expires, once (ProofID
// names it in the room's used proofs).
type Wait struct {
	Room      string
	Net       string
	Nonce     string
	NotBefore time.Time
	Expires   time.Time
}

// NewWait returns a wait for room, to be used from client network net,
// due at notBefore, expiring WaitTTL later, with a fresh random nonce.
// Times are kept to the millisecond.
func NewWait(room, net string, notBefore time.Time) Wait {
	nb := time.UnixMilli(notBefore.UnixMilli())
	return Wait{Room: room, Net: net, Nonce: rand.Text(), NotBefore: nb, Expires: nb.Add(WaitTTL)}
}

// ProofID names the wait in the room's record of used proofs.
func (w Wait) ProofID() string { return "w:" + w.Nonce }

// Left is how long from now until w is due (0 once it is).
func (w Wait) Left(now time.Time) time.Duration { return max(w.NotBefore.Sub(now), 0) }

// body is the signed part of the token: version, room, nonce, notBefore
// and expires (ms), and the network (base64url), separated by dots (none
// of them holds one).
func (w Wait) body() string {
	return waitVersion + "." + w.Room + "." + w.Nonce + "." +
		strconv.FormatInt(w.NotBefore.UnixMilli(), 10) + "." + strconv.FormatInt(w.Expires.UnixMilli(), 10) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(w.Net))
}

// SignWait returns w as a token: its fields and their HMAC-SHA256 under
// the wait key, URL-safe.
func (k *Keys) SignWait(w Wait) string {
	b := w.body()
	return b + "." + base64.RawURLEncoding.EncodeToString(k.waitMAC(b))
}

func (k *Keys) waitMAC(body string) []byte {
	m := hmac.New(sha256.New, k.wait)
	m.Write([]byte(body))
	return m.Sum(nil)
}

// VerifyWait reads token as a wait for room brought from client network
// net at now. It returns ErrInvalid for a token this deployment did not
// sign (or a malformed one), ErrOtherRoom, ErrOtherNetwork, ErrExpired, or
// ErrEarly with the wait (so that its time left can be shown), all
// wrapped. Whether the token was used is the enter script's to know.
func (k *Keys) VerifyWait(token, room, net string, now time.Time) (Wait, error) {
	w, err := k.readWait(token)
	if err != nil {
		return Wait{}, fmt.Errorf("challenge: verify wait %s: %w", room, err)
	}
	switch {
	case w.Room != room:
		return Wait{}, fmt.Errorf("challenge: verify wait %s: %w", room, ErrOtherRoom)
	case w.Net != net:
		return Wait{}, fmt.Errorf("challenge: verify wait %s: %w", room, ErrOtherNetwork)
	case !now.Before(w.Expires):
		return Wait{}, fmt.Errorf("challenge: verify wait %s: %w", room, ErrExpired)
	case now.Before(w.NotBefore):
		return w, fmt.Errorf("challenge: verify wait %s: %w", room, ErrEarly)
	}
	return w, nil
}

// readWait checks token's MAC (in constant time) and reads its fields.
func (k *Keys) readWait(token string) (Wait, error) {
	if len(token) > MaxWaitTokenLen {
		return Wait{}, ErrInvalid
	}
	body, sig, ok := cut(token)
	if !ok {
		return Wait{}, ErrInvalid
	}
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, k.waitMAC(body)) {
		return Wait{}, ErrInvalid
	}
	f := strings.Split(body, ".")
	if len(f) != 6 || f[0] != waitVersion {
		return Wait{}, ErrInvalid
	}
	nb, err1 := strconv.ParseInt(f[3], 10, 64)
	exp, err2 := strconv.ParseInt(f[4], 10, 64)
	net, err3 := base64.RawURLEncoding.DecodeString(f[5])
	if err1 != nil || err2 != nil || err3 != nil || f[2] == "" { // signed by us, so never; but fail closed
		return Wait{}, ErrInvalid
	}
	return Wait{Room: f[1], Net: string(net), Nonce: f[2], NotBefore: time.UnixMilli(nb), Expires: time.UnixMilli(exp)}, nil
}

// cut splits a token at its last dot: the body and the MAC.
func cut(token string) (body, sig string, ok bool) {
	i := strings.LastIndexByte(token, '.')
	if i <= 0 {
		return "", "", false
	}
	return token[:i], token[i+1:], true
}
