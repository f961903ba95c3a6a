// Package bypass makes and reads a room's test links: a link that lets
// its holder into the live room at once, outside the line, up to its uses
// and until its end. A link's token is its id, 128 random bits, and a MAC
// of the room and the id under the deployment's secret, so that a made-up
// token is refused without a look-up; its uses and end are kept with the
// room (queue.Engine), where it can be revoked.
package bypass

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/visitor"
)

// Store keeps the rooms' test links (queue.Engine).
type Store interface {
	AddBypassLink(ctx context.Context, room, id string, uses int, expires *time.Time) error
	BypassLinks(ctx context.Context, room string) ([]queue.BypassLink, error)
	RevokeBypassLink(ctx context.Context, room, id string) (bool, error)
}

// Links makes and reads test links.
type Links struct {
	store  Store
	signer *visitor.Signer
	now    func() time.Time
}

// New returns the test links kept in store and signed by signer, on the
// clock now.
func New(store Store, signer *visitor.Signer, now func() time.Time) *Links {
	return &Links{store: store, signer: signer, now: now}
}

// Spec is what a new link allows: Uses passes (1 to
// queue.MaxBypassUses), until ExpiresAt (nil for none).
type Spec struct {
	Uses      int        `json:"uses"`
	ExpiresAt *time.Time `json:"expiresAt"`
}

// InvalidError is a spec refused, naming its field.
type InvalidError struct{ Field, Msg string }

func (e *InvalidError) Error() string { return e.Msg }

// Validate refuses a spec that allows no use, too many, or ends by now.
func (s Spec) Validate(now time.Time) error {
	if s.Uses < 1 || s.Uses > queue.MaxBypassUses {
		return &InvalidError{"uses", fmt.Sprintf("uses must be from 1 to %d", queue.MaxBypassUses)}
	}
	if s.ExpiresAt != nil && !s.ExpiresAt.After(now) {
		return &InvalidError{"expiresAt", "expiresAt must be in the future"}
	}
	return nil
}

// Made is a new link: its record and its token, shown once.
type Made struct {
	queue.BypassLink
	Token string `json:"token"`
}

// Make records a new test link of room with spec and returns it.
func (l *Links) Make(ctx context.Context, room string, spec Spec) (Made, error) {
	if err := spec.Validate(l.now()); err != nil {
		return Made{}, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Made{}, fmt.Errorf("bypass: a link id: %w", err)
	}
	id := base64.RawURLEncoding.EncodeToString(b[:])
	if err := l.store.AddBypassLink(ctx, room, id, spec.Uses, spec.ExpiresAt); err != nil {
		return Made{}, err
	}
	var exp *time.Time
	if spec.ExpiresAt != nil {
		t := spec.ExpiresAt.UTC()
		exp = &t
	}
	return Made{BypassLink: queue.BypassLink{ID: id, Uses: spec.Uses, ExpiresAt: exp}, Token: l.token(room, id)}, nil
}

// List returns room's links.
func (l *Links) List(ctx context.Context, room string) ([]queue.BypassLink, error) {
	return l.store.BypassLinks(ctx, room)
}

// ErrNoLink reports a revocation of a link the room does not have.
var ErrNoLink = errors.New("bypass: no such link")

// Revoke ends room's link id.
func (l *Links) Revoke(ctx context.Context, room, id string) error {
	ok, err := l.store.RevokeBypassLink(ctx, room, id)
	if err == nil && !ok {
		err = ErrNoLink
	}
	return err
}

func (l *Links) token(room, id string) string {
	return id + "." + l.signer.MAC("bypass", room+"\x00"+id)
}

// Read returns the link id of token when its MAC holds for room; the
// comparison runs in constant time.
func (l *Links) Read(room, token string) (string, bool) {
	id, mac, ok := strings.Cut(token, ".")
	if !ok || len(id) != 22 || len(token) > 128 {
		return "", false
	}
	want := l.signer.MAC("bypass", room+"\x00"+id)
	return id, subtle.ConstantTimeCompare([]byte(mac), []byte(want)) == 1
}
