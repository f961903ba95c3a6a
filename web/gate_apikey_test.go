package web

import (
	"context"
	"strings"
	"sync"
	"testing"
	"waitingroom/server/admin"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/web/gatemode"
)

// rotateDuringSave runs rotate once between a settings save's read of
// the room and its write: the race of a save with a key rotation.
type rotateDuringSave struct {
	*queue.Engine
	once   sync.Once
	rotate func()
}

func (b *rotateDuringSave) SaveRoom(ctx context.Context, name string, s room.Settings) error {
	if b.rotate != nil {
		b.once.Do(b.rotate)
	}
	return b.Engine.SaveRoom(ctx, name, s)
}

// lastRecords keeps the last record written of each room.
type lastRecords struct {
	mu   sync.Mutex
	last map[string]room.Settings
}

func (l *lastRecords) Record(_ context.Context, name string, s room.Settings) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]room.Settings{}
	}
	l.last[name] = s
	return nil
}

func (l *lastRecords) Forget(context.Context, string) error { return nil }

// TestGateAPIKeyRotationSurvivesASave: a settings save that read the room
// before a key rotation and writes after it brings the old key back
// neither in Redis nor in the database's record.
func TestGateAPIKeyRotationSurvivesASave(t *testing.T) {
	t.Parallel()
	b := &rotateDuringSave{}
	recs := &lastRecords{}
	g := newGateHarness(t, func(o *Options) {
		b.Engine = o.Rooms.(*queue.Engine)
		o.Rooms, o.Records = b, recs
	})
	var newKey string
	b.rotate = func() {
		k, err := g.web.replaceAPIKey(context.Background(), "op2", g.room)
		if err != nil {
			t.Error(err)
		}
		newKey = k
	}
	title := "retitled"
	if _, err := g.web.roomWrites.Save(context.Background(), "op1", g.room, admin.Write{Patch: room.Patch{Title: &title}, Exist: admin.MustExist}); err != nil {
		t.Fatal(err)
	}
	if newKey == "" {
		t.Fatal("no rotation ran")
	}
	end := "/api/rooms/" + g.room + "/sessions/" + strings.Repeat("A", 22) + "/end"
	if r := g.do(t, "POST", end, "", g.keyed(g.apiKey), nil); r.status != 401 {
		t.Errorf("the rotated-out key: %d", r.status)
	}
	if r := g.do(t, "POST", end, "", g.keyed(newKey), nil); r.status != 204 {
		t.Errorf("the new key: %d %s", r.status, r.body)
	}
	set, _ := g.eng.Room(context.Background(), g.room)
	rec := recs.last[g.room]
	if set.Title != title || rec.Title != title || !gatemode.APIKeyMatches(newKey, rec.Gate.APIKeyHash) {
		t.Fatalf("title %q, record %q with the new key: %v", set.Title, rec.Title, gatemode.APIKeyMatches(newKey, rec.Gate.APIKeyHash))
	}
	// Redis lost the room: the record brings the new key back.
	if _, err := g.eng.DeleteRoom(context.Background(), g.room); err != nil {
		t.Fatal(err)
	}
	if _, err := g.eng.CreateRoom(context.Background(), g.room, rec); err != nil {
		t.Fatal(err)
	}
	if r := g.do(t, "POST", end, "", g.keyed(newKey), nil); r.status != 204 {
		t.Errorf("the new key after a restore: %d %s", r.status, r.body)
	}
	if r := g.do(t, "POST", end, "", g.keyed(g.apiKey), nil); r.status != 401 {
		t.Errorf("the old key after a restore: %d", r.status)
	}
}
