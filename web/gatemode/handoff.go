package gatemode

import (
	"context"
	"errors"
	"strings"
	"time"

	"waitingroom/server/pass"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/web/response"
)

// Target is where a room's READY page sends its buyers: the shop's name,
// its origin (the pass's audience) and the path the shop opens with.
type Target struct {
	Shop     string
	Audience string
	Next     string
	gate     gateOf
}

// Target returns room set's shop; ok is false when it sends its buyers to
// no shop, or gate mode is off: then its READY page has its order form.
func (gt *Gate) Target(set room.Settings) (t Target, ok bool) {
	if !gt.on() {
		return Target{}, false
	}
	g := gateSettings(set)
	if !g.on {
		return Target{}, false
	}
	return Target{Shop: g.shop, Audience: g.audience, Next: g.next, gate: g}, true
}

// HandoffPolicy is the hand-off page's CSP: the page's own, but its one
// form may post to the shop's origin only.
func HandoffPolicy(audience string) string {
	return strings.Replace(response.ContentSecurityPolicy, "form-action 'self'", "form-action "+audience, 1)
}

// MintPass mints a single-use pass of room name to t's shop for the entry
// token tok of visitor, signed as issued by issuer. The pass is never
// logged. Its errors are the engine's (queue.ErrTokenInvalid, …) or the
// store's.
func (gt *Gate) MintPass(ctx context.Context, name, visitor, tok, issuer string, t Target) (string, error) {
	jti, err := randomID(16)
	if err != nil {
		return "", err
	}
	exp, err := gt.d.Gates.MintPass(ctx, name, visitor, tok, jti)
	switch {
	case errors.Is(err, queue.ErrTokenInvalid), errors.Is(err, queue.ErrTokenUsed), errors.Is(err, queue.ErrTokenInUse), errors.As(err, new(*queue.WaitError)):
		return "", err
	case err != nil:
		gt.storeDown.failed(time.Now())
		return "", err
	}
	now := time.Now()
	gt.storeDown.ok(now)
	compact, err := gt.d.PassKeys.Sign(pass.Claims{Room: name, Subject: queue.Subject(gt.d.Gates.Namespace(), visitor), ID: jti, Audience: t.Audience,
		Issuer: issuer, IssuedAt: now, Expiry: exp})
	if err != nil {
		return "", err
	}
	gt.rooms.remember(name, t.gate, now)
	return compact, nil
}
