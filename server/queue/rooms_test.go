package queue

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"waitingroom/server/identity/identitytest"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"

	"github.com/alicebob/miniredis/v2"
	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"
)

// roomKeyCount counts the room's keys that exist. Every key of a room is
// one of keyNames and shares its hash tag, so this works on a Cluster too,
// where KEYS would ask one node only.
func roomKeyCount(t *testing.T, rdb redis.UniversalClient, name string) int {
	t.Helper()
	k := testKeys(rdb, name)
	n := 0
	for key := range keyNames {
		c, err := rdb.Exists(context.Background(), k.key(key)).Result()
		if err != nil {
			t.Fatal(err)
		}
		n += int(c)
	}
	return n
}

func TestDeleteRoom(t *testing.T) {
	real := servicetest.Redis(t)
	mini := miniredis.RunT(t)
	for _, tc := range []struct {
		name string
		rdb  redis.UniversalClient
	}{{"redis", real}, {"embedded", redis.NewClient(&redis.Options{Addr: mini.Addr()})}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := New(tc.rdb, DefaultNamespace(tc.rdb))
			clock := clockwork.NewFakeClockAt(time.Now())
			e.SetClock(clock.Now)
			gone, kept := servicetest.RoomName(t, tc.rdb), servicetest.RoomName(t, tc.rdb)
			for _, name := range []string{gone, kept} {
				if err := e.SaveRoom(ctx, name, room.Defaults(name)); err != nil {
					t.Fatal(err)
				}
				e.Admit(ctx, name, time.Second, nil)
				for _, v := range visitors(t, 30) {
					if _, err := e.Enter(ctx, name, v); err != nil {
						t.Fatal(err)
					}
				}
				clock.Advance(20 * time.Millisecond)
				if _, err := e.Admit(ctx, name, time.Second, tokens(t, 5)); err != nil {
					t.Fatal(err)
				}
				if _, err := e.MarkPhase(ctx, name, PhaseOpen); err != nil {
					t.Fatal(err)
				}
			}
			keptBefore := roomKeyCount(t, tc.rdb, kept)
			if n := roomKeyCount(t, tc.rdb, gone); n < 5 {
				t.Fatalf("the room has only %d keys before its deletion", n)
			}

			d, err := e.DeleteRoom(ctx, gone)
			if err != nil || !d.Existed || d.Keys < 5 {
				t.Fatalf("delete: %+v %v", d, err)
			}
			if n := roomKeyCount(t, tc.rdb, gone); n != 0 {
				t.Fatalf("%d keys of the deleted room remain", n)
			}
			if rooms, _ := e.Rooms(ctx); slices.Contains(rooms, gone) || !slices.Contains(rooms, kept) {
				t.Fatalf("rooms set after delete: %v", rooms)
			}
			if _, err := e.Room(ctx, gone); !errors.Is(err, room.ErrNotFound) {
				t.Fatalf("settings of a deleted room: %v", err)
			}
			if _, err := e.Enter(ctx, gone, visitors(t, 1)[0]); !errors.Is(err, room.ErrNotFound) {
				t.Fatalf("enter into a deleted room: %v", err)
			}
			// The other room is untouched.
			if n := roomKeyCount(t, tc.rdb, kept); n != keptBefore {
				t.Fatalf("the other room went from %d keys to %d", keptBefore, n)
			}
			if st, err := e.Stats(ctx, kept); err != nil || st.Issued != 30 || st.Waiting+st.Admitted != 30 {
				t.Fatalf("the other room: %+v %v", st, err)
			}
			if d, err := e.DeleteRoom(ctx, gone); err != nil || d.Existed || d.Keys != 0 {
				t.Fatalf("second delete: %+v %v", d, err)
			}
		})
	}
}

// TestRoomsSettings: the settings of several rooms read at once are those
// Room reads; unknown rooms and undecodable settings are left out.
func TestRoomsSettings(t *testing.T) {
	s := room.Defaults("x")
	s.Title, s.Branding.Listed = "봄 세일", true
	e, name, rdb := newRoom(t, s)
	ctx := context.Background()
	want, err := e.Room(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		names  []string
		broken bool // the room's branding is not JSON
		want   map[string]room.Settings
	}{
		{"none", nil, false, map[string]room.Settings{}},
		{"one known, one unknown", []string{name, name + "-unknown"}, false, map[string]room.Settings{name: want}},
		{"undecodable", []string{name}, true, map[string]room.Settings{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.broken {
				if err := rdb.HSet(ctx, testKeys(rdb, name).key("cfg"), "branding", "{not json").Err(); err != nil {
					t.Fatal(err)
				}
			}
			got, err := e.RoomsSettings(ctx, tc.names)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("%+v %v, want %+v", got, err, tc.want)
			}
		})
	}
}

// TestRoomKeepsShopSettings stores shopURL and maxPerBuyer in the cfg hash
// and reads them back; a room saved before they existed reads as none.
func TestRoomKeepsShopSettings(t *testing.T) {
	s := room.Defaults("x")
	s.ShopURL, s.MaxPerBuyer = "https://shop.example/sale", 2
	e, name, rdb := newRoom(t, s)
	ctx := context.Background()
	got, err := e.Room(ctx, name)
	if err != nil || got.ShopURL != s.ShopURL || got.MaxPerBuyer != 2 {
		t.Fatalf("Room = %+v, %v; want shopURL %q and maxPerBuyer 2", got, err, s.ShopURL)
	}
	if err := rdb.HDel(ctx, testKeys(rdb, name).key("cfg"), "shopURL", "maxPerBuyer").Err(); err != nil {
		t.Fatal(err)
	}
	got, err = e.Room(ctx, name)
	if err != nil || got.ShopURL != "" || got.MaxPerBuyer != 0 {
		t.Fatalf("an older room: %+v, %v; want no shop URL and no per-buyer limit", got, err)
	}
}

// TestRoomKeepsBranding stores the branding in the cfg hash and reads it
// back whole; a room saved before it existed, or with a branding field
// that is not JSON, reads as none or as an error that names the room.
func TestRoomKeepsBranding(t *testing.T) {
	s := room.Defaults("x")
	s.Branding = room.Branding{AccentColor: "#1a4fd0", Description: "한정 드롭 <b>", DefaultLanguage: "ko",
		ShopName: "Shop", EmbedOrigins: []string{"https://a.example", "https://b.example"}, EmbedTarget: room.EmbedSameTab, Listed: true}
	e, name, rdb := newRoom(t, s)
	ctx := context.Background()
	got, err := e.Room(ctx, name)
	if err != nil || !reflect.DeepEqual(got.Branding, s.Branding) {
		t.Fatalf("Room = %+v, %v; want %+v", got.Branding, err, s.Branding)
	}
	key := testKeys(rdb, name).key("cfg")
	if err := rdb.HDel(ctx, key, "branding").Err(); err != nil {
		t.Fatal(err)
	}
	if got, err = e.Room(ctx, name); err != nil || !reflect.DeepEqual(got.Branding, room.Branding{}) {
		t.Fatalf("an older room: %+v, %v; want no branding", got.Branding, err)
	}
	if err := rdb.HSet(ctx, key, "branding", "{not json").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err = e.Room(ctx, name); err == nil || !strings.Contains(err.Error(), name) {
		t.Fatalf("a broken branding field: %v, want an error naming the room", err)
	}
}

// TestReadySpreadReachesTheHub: a room's readySpreadMs is stored, read
// back, published in each tick's event ("rs", absent for the server's
// default) and carried by the snapshot, so that the hubs learn it without
// a command of their own.
func TestReadySpreadReachesTheHub(t *testing.T) {
	ms := func(n int) *int { return &n }
	tests := []struct {
		name   string
		spread *int
		rs     string // what the event says; "" for nothing
	}{
		{"unset: the server's default", nil, ""},
		{"no spread", ms(0), `,"rs":0`},
		{"250 ms", ms(250), `,"rs":250`},
		{"one tick", ms(1000), `,"rs":1000`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.ReadySpreadMs = tt.spread }))
			got, err := e.Room(ctx, name)
			if err != nil || !room.SameReadySpread(got.ReadySpreadMs, tt.spread) {
				t.Fatalf("Room: readySpreadMs %v (%v), want %v", deref(got.ReadySpreadMs), err, deref(tt.spread))
			}

			payload := tickEvent(t, e, rdb, name)
			if tt.rs == "" && strings.Contains(payload, `"rs"`) || tt.rs != "" && !strings.Contains(payload, tt.rs) {
				t.Fatalf("event %s, want %q", payload, tt.rs)
			}
			ev, err := ParseEvent([]byte(payload))
			if err != nil || !room.SameReadySpread(ev.ReadySpreadMs, tt.spread) {
				t.Fatalf("event's readySpreadMs %v (%v), want %v", deref(ev.ReadySpreadMs), err, deref(tt.spread))
			}

			snap, err := e.Snapshot(ctx, name)
			if err != nil || !room.SameReadySpread(snap.ReadySpreadMs, tt.spread) {
				t.Fatalf("snapshot's readySpreadMs %v (%v), want %v", deref(snap.ReadySpreadMs), err, deref(tt.spread))
			}
		})
	}
}

// TestReadySpreadChanges: a save that sets the spread back to the
// server's default takes it out of the next event and snapshot.
func TestReadySpreadChanges(t *testing.T) {
	ctx := context.Background()
	v := 300
	s := settings(func(s *room.Settings) { s.ReadySpreadMs = &v })
	e, name, _ := newRoom(t, s)
	for _, want := range []*int{nil, new(int), &v} {
		s.ReadySpreadMs = want
		if err := e.SaveRoom(ctx, name, s); err != nil {
			t.Fatal(err)
		}
		got, err := e.Room(ctx, name)
		if err != nil || !room.SameReadySpread(got.ReadySpreadMs, want) {
			t.Fatalf("Room after saving %v: %v (%v)", deref(want), deref(got.ReadySpreadMs), err)
		}
		snap, err := e.Snapshot(ctx, name)
		if err != nil || !room.SameReadySpread(snap.ReadySpreadMs, want) {
			t.Fatalf("snapshot after saving %v: %v (%v)", deref(want), deref(snap.ReadySpreadMs), err)
		}
	}
}

// TestRoomSavedBeforeReadySpread: a room whose settings hash has no
// readySpreadMs (saved before the setting existed) follows the server's
// default.
func TestRoomSavedBeforeReadySpread(t *testing.T) {
	ctx := context.Background()
	v := 300
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.ReadySpreadMs = &v }))
	if err := rdb.HDel(ctx, testKeys(rdb, name).key("cfg"), "readySpreadMs").Err(); err != nil {
		t.Fatal(err)
	}
	got, err := e.Room(ctx, name)
	if err != nil || got.ReadySpreadMs != nil {
		t.Fatalf("Room: readySpreadMs %v (%v), want nil", deref(got.ReadySpreadMs), err)
	}
	if snap, err := e.Snapshot(ctx, name); err != nil || snap.ReadySpreadMs != nil {
		t.Fatalf("snapshot: readySpreadMs %v (%v), want nil", deref(snap.ReadySpreadMs), err)
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestGateSettingsRoundTrip: the gate is saved with the room, read back
// whole, and its session fields are plain fields for the scripts.
func TestGateSettingsRoundTrip(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	for _, tc := range []struct {
		name         string
		gate         room.Gate
		plainSeconds string
		plainMode    string
	}{
		{"set", room.Gate{TargetURL: "https://shop.example/buy", SessionSeconds: 90, SessionMode: room.SessionFixed, FailOpen: true,
			Protect: []string{"/checkout", "/cart"}, APIKeyHash: strings.Repeat("a", 64)}, "90", "fixed"},
		{"zero values", room.Gate{}, "600", "idle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, name := gateRoom(t, rdb, func(s *room.Settings) { s.Gate = tc.gate })
			got, err := e.Room(ctx, name)
			if err != nil || !reflect.DeepEqual(got.Gate, tc.gate) {
				t.Fatalf("read back %+v %v, want %+v", got.Gate, err, tc.gate)
			}
			all, err := e.RoomsSettings(ctx, []string{name})
			if err != nil || !reflect.DeepEqual(all[name], got) {
				t.Fatalf("RoomsSettings %+v %v", all[name], err)
			}
			cfg := testKeys(rdb, name).key("cfg")
			if f := rdb.HMGet(ctx, cfg, "sessionSeconds", "sessionMode").Val(); f[0] != tc.plainSeconds || f[1] != tc.plainMode {
				t.Fatalf("plain fields %v", f)
			}
		})
	}
	t.Run("a room saved before the gate", func(t *testing.T) {
		e, name := gateRoom(t, rdb, nil)
		rdb.HDel(ctx, testKeys(rdb, name).key("cfg"), "gate", "sessionSeconds", "sessionMode")
		got, err := e.Room(ctx, name)
		if err != nil || !reflect.DeepEqual(got.Gate, room.DefaultGate()) {
			t.Fatalf("%+v %v", got.Gate, err)
		}
		// Its sessions take the defaults.
		_, s := redeemed(t, e, name)
		if s.IdleSeconds != room.DefaultSessionSeconds || s.Mode != room.SessionIdle {
			t.Fatalf("session %+v", s)
		}
	})
}

// TestDeleteRoomTakesTheGateKeys: a deleted room keeps no pass ids and no
// sessions.
func TestDeleteRoomTakesTheGateKeys(t *testing.T) {
	ctx := context.Background()
	rdb := gateRedis(t)
	e, name := gateRoom(t, rdb, nil)
	redeemed(t, e, name)
	vs, toks := gateAdmitted(t, e, name, 1)
	if _, err := e.MintPass(ctx, name, vs[0], toks[0], newID(t)); err != nil {
		t.Fatal(err)
	}
	k := testKeys(rdb, name)
	if n := rdb.Exists(ctx, k.key("jtis"), k.key("jtiof"), k.key("sessions")).Val(); n != 3 {
		t.Fatalf("%d of the 3 gate keys before the delete", n)
	}
	if _, err := e.DeleteRoom(ctx, name); err != nil {
		t.Fatal(err)
	}
	if n := roomKeyCount(t, rdb, name); n != 0 {
		t.Fatalf("%d keys after the delete", n)
	}
}

// TestBornTellsTheRoomsApart: a room's positions, snapshots and events
// carry when it was created, so that an instance following the room can
// tell a room deleted and created again from the old one (their tickets
// and ticks count anew).
func TestBornTellsTheRoomsApart(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(nil))
	born := func() (pos, snap, event int64) {
		t.Helper()
		p, err := e.Enter(ctx, name, visitors(t, 1)[0])
		if err != nil {
			t.Fatal(err)
		}
		s, err := e.Snapshot(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := ParseEvent([]byte(tickEvent(t, e, rdb, name)))
		if err != nil {
			t.Fatal(err)
		}
		return p.Born, s.Born, ev.Born
	}
	created, err := rdb.HGet(ctx, testKeys(rdb, name).key("cfg"), CreatedField).Int64()
	if err != nil {
		t.Fatal(err)
	}
	if p, s, ev := born(); p != created || s != created || ev != created {
		t.Fatalf("born: position %d, snapshot %d, event %d; want the room's %s %d", p, s, ev, CreatedField, created)
	}
	if _, err := e.DeleteRoom(ctx, name); err != nil {
		t.Fatal(err)
	}
	clockOf(t, e).Advance(time.Second)
	if err := e.SaveRoom(ctx, name, settings(nil)); err != nil {
		t.Fatal(err)
	}
	if p, s, ev := born(); p != created+1000 || s != p || ev != p {
		t.Fatalf("born after the room was created again: position %d, snapshot %d, event %d; want %d", p, s, ev, created+1000)
	}
}

// TestRoomLinesRoundTrip: a room's lines are stored in the cfg hash as
// "name share access" joined by "|" (the format the scripts parse), their
// access spelled out, and read back; a room saved before lines existed
// has none, and a stored value that does not parse is an error naming the
// room and the field.
func TestRoomLinesRoundTrip(t *testing.T) {
	ctx := context.Background()
	rdb := servicetest.Redis(t)
	e := New(rdb, DefaultNamespace(rdb))
	pem := identitytest.NewKey(t, "ec", "").PEM(t)
	l := func(name string, share float64, access string) room.Line {
		return room.Line{Name: name, Share: share, Access: access}
	}
	tests := []struct {
		name   string
		lines  []room.Line
		stored string
		want   []room.Line
	}{
		{"none", nil, "", nil},
		{"an empty list", []room.Line{}, "", nil},
		{"one line", []room.Line{l("all", 1, room.LineOpen)}, "all 1 open", []room.Line{l("all", 1, room.LineOpen)}},
		{"two lines", []room.Line{l("presale", 0.7, room.LineCode), l("general", 0.3, room.LineOpen)},
			"presale 0.7 code|general 0.3 open",
			[]room.Line{l("presale", 0.7, room.LineCode), l("general", 0.3, room.LineOpen)}},
		{"an empty access is open", []room.Line{l("a", 0.5, ""), l("b-2", 0.5, room.LineCode)}, "a 0.5 open|b-2 0.5 code",
			[]room.Line{l("a", 0.5, room.LineOpen), l("b-2", 0.5, room.LineCode)}},
		{"four lines, by identity too", []room.Line{l("fans_club", 0.125, room.LineIdentity), l("VIP", 0.375, room.LineCode), l("x", 0.1, room.LineOpen), l("y", 0.4, room.LineOpen)},
			"fans_club 0.125 identity|VIP 0.375 code|x 0.1 open|y 0.4 open",
			[]room.Line{l("fans_club", 0.125, room.LineIdentity), l("VIP", 0.375, room.LineCode), l("x", 0.1, room.LineOpen), l("y", 0.4, room.LineOpen)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := servicetest.RoomName(t, rdb)
			s := settings(func(s *room.Settings) {
				s.Lines = tt.lines
				s.Identity, s.IdentityKeys = room.IdentityOptional, pem
			})
			if err := e.SaveRoom(ctx, name, s); err != nil {
				t.Fatal(err)
			}
			cfg := testKeys(rdb, name).key("cfg")
			if got, err := rdb.HGet(ctx, cfg, "lines").Result(); err != nil || got != tt.stored {
				t.Fatalf("stored lines %q (%v), want %q", got, err, tt.stored)
			}
			got, err := e.Room(ctx, name)
			if err != nil || !reflect.DeepEqual(got.Lines, tt.want) {
				t.Fatalf("Room: lines %#v (%v), want %#v", got.Lines, err, tt.want)
			}
			if all, err := e.RoomsSettings(ctx, []string{name}); err != nil || !reflect.DeepEqual(all[name], got) {
				t.Fatalf("RoomsSettings %+v (%v), want %+v", all[name], err, got)
			}
		})
	}
	t.Run("a room saved before lines", func(t *testing.T) {
		name := servicetest.RoomName(t, rdb)
		if err := e.SaveRoom(ctx, name, settings(nil)); err != nil {
			t.Fatal(err)
		}
		if err := rdb.HDel(ctx, testKeys(rdb, name).key("cfg"), "lines").Err(); err != nil {
			t.Fatal(err)
		}
		if got, err := e.Room(ctx, name); err != nil || got.Lines != nil {
			t.Fatalf("Room: lines %#v (%v), want none", got.Lines, err)
		}
	})
	for _, bad := range []string{"presale", "presale 0.7", "presale 0.7 code extra", "presale  0.7 code", "pre sale 1 open",
		"presale x code", "presale 1 vip", "presale 0.7 code|", "|presale 1 open", "a|b 1 open", "pre|sale 1 open"} {
		t.Run("stored "+bad, func(t *testing.T) {
			name := servicetest.RoomName(t, rdb)
			if err := e.SaveRoom(ctx, name, settings(nil)); err != nil {
				t.Fatal(err)
			}
			if err := rdb.HSet(ctx, testKeys(rdb, name).key("cfg"), "lines", bad).Err(); err != nil {
				t.Fatal(err)
			}
			if _, err := e.Room(ctx, name); err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "lines") {
				t.Fatalf("Room: %v, want an error naming the room and its lines", err)
			}
		})
	}
}
