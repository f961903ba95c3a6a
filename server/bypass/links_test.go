package bypass

import (
	"context"
	"errors"
	"testing"
	"time"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/visitor"
)

// TestLinks: a link is made only with a spec that allows a use in the
// future; its token reads back in its room only, not once altered; a
// revoked link is gone, and revoking it again says so.
func TestLinks(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	if err := eng.SaveRoom(ctx, name, room.Defaults(name)); err != nil {
		t.Fatal(err)
	}
	signer, err := visitor.NewSigner([]byte("test-secret-key-0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	l := New(eng, signer, func() time.Time { return now })
	past, later := now.Add(-time.Minute), now.Add(time.Hour)
	for _, c := range []struct {
		name  string
		spec  Spec
		field string
	}{
		{"no use", Spec{Uses: 0}, "uses"},
		{"too many", Spec{Uses: queue.MaxBypassUses + 1}, "uses"},
		{"ended", Spec{Uses: 1, ExpiresAt: &past}, "expiresAt"},
	} {
		var inv *InvalidError
		if _, err := l.Make(ctx, name, c.spec); !errors.As(err, &inv) || inv.Field != c.field {
			t.Fatalf("%s: %v, want a refusal of %s", c.name, err, c.field)
		}
	}
	m, err := l.Make(ctx, name, Spec{Uses: 3, ExpiresAt: &later})
	if err != nil || m.Uses != 3 || m.ExpiresAt == nil {
		t.Fatalf("make: %+v %v", m, err)
	}
	altered := []byte(m.Token) // the last character changed, whatever it was
	altered[len(altered)-1] ^= 1
	for _, c := range []struct {
		name, room, token string
		ok                bool
	}{
		{"its room", name, m.Token, true},
		{"another room", name + "x", m.Token, false},
		{"altered", name, string(altered), false},
		{"no MAC", name, m.ID, false},
	} {
		if id, ok := l.Read(c.room, c.token); ok != c.ok || ok && id != m.ID {
			t.Fatalf("read %s: %q %v, want %v", c.name, id, ok, c.ok)
		}
	}
	if links, err := l.List(ctx, name); err != nil || len(links) != 1 || links[0].ID != m.ID {
		t.Fatalf("list: %+v %v", links, err)
	}
	if err := l.Revoke(ctx, name, m.ID); err != nil {
		t.Fatal(err)
	}
	if err := l.Revoke(ctx, name, m.ID); !errors.Is(err, ErrNoLink) {
		t.Fatalf("revoke again: %v, want ErrNoLink", err)
	}
}
