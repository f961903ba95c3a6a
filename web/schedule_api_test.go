package web

import (
	"context"
	"net/http/cookiejar"
	"strconv"
	"strings"
	"testing"
	"time"

	"waitingroom/server/draw"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/web/sse"
)

func rfc(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339) }

func TestScheduleAdminAndEnter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	path := "/api/admin/rooms/" + h.room
	bad := []string{
		`{"opensAt":"` + rfc(time.Hour) + `","closesAt":"` + rfc(time.Minute) + `"}`,
		`{"prequeueAt":"` + rfc(time.Hour) + `"}`,
		`{"opensAt":"at ten"}`,
		`{"mode":"lottery"}`,
	}
	for _, body := range bad {
		if r := h.do(t, "PUT", path, body, auth, nil); r.status != 400 {
			t.Errorf("PUT %s: %d %s, want 400", body, r.status, r.body)
		}
	}
	tests := []struct {
		name, settings, code string
	}{
		{"before the pre-queue", `{"prequeueAt":"` + rfc(time.Hour) + `","opensAt":"` + rfc(2*time.Hour) + `","closesAt":null}`, "not_open"},
		{"after closing", `{"prequeueAt":null,"opensAt":null,"closesAt":"` + rfc(-time.Second) + `"}`, "sale_ended"},
		{"mode closed", `{"closesAt":null,"mode":"closed"}`, "sale_ended"},
	}
	for _, tt := range tests {
		if r := h.do(t, "PUT", path, tt.settings, auth, nil); r.status != 200 {
			t.Fatalf("%s: PUT %d %s", tt.name, r.status, r.body)
		}
		r := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil)
		var e struct {
			Error      string `json:"error"`
			Message    string `json:"message"`
			OpensAt    *int64 `json:"opensAt"`
			ServerTime int64  `json:"serverTime"`
		}
		r.json(t, &e)
		if r.status != 409 || e.Error != tt.code || e.Message == "" || e.ServerTime == 0 {
			t.Fatalf("%s: enter answered %d %s, want 409 %s", tt.name, r.status, r.body, tt.code)
		}
		if tt.code == "not_open" && (e.OpensAt == nil || !strings.Contains(e.Message, "join from")) {
			t.Errorf("%s: no opening time in %s", tt.name, r.body)
		}
	}
	var view struct {
		Settings room.Settings `json:"settings"`
	}
	h.do(t, "GET", path, "", auth, nil).json(t, &view)
	if view.Settings.Mode != room.ModeClosed || !view.Settings.ServeLineAfterClose {
		t.Errorf("settings %+v", view.Settings)
	}
	if r := h.do(t, "PUT", path, `{"mode":"queue"}`, auth, nil); r.status != 200 || !strings.Contains(r.body, `"mode":"fifo"`) {
		t.Errorf("mode queue: %d %s, want it stored as fifo", r.status, r.body)
	}
}

func TestDrawAPIAndPrequeueNetworks(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := context.Background()
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	path := "/api/admin/rooms/" + h.room
	if r := h.do(t, "PUT", path, `{"prequeueAt":"`+rfc(-time.Hour)+`","opensAt":"`+rfc(time.Hour)+`"}`, auth, nil); r.status != 200 {
		t.Fatalf("PUT %d %s", r.status, r.body)
	}
	var info queue.DrawInfo
	h.do(t, "GET", "/api/rooms/"+h.room+"/draw", "", nil, nil).json(t, &info)
	if len(info.Commitment) != 64 || info.Seed != "" || info.Done {
		t.Fatalf("before the draw: %+v", info)
	}
	for range 3 {
		r := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", nil, nil)
		var p queue.Position
		r.json(t, &p)
		if r.status != 200 || p.Status != queue.StatusPrequeued || p.Phase != queue.PhasePrequeue || p.OpensAt == nil || p.ServerTime == 0 {
			t.Fatalf("pre-queue enter: %d %s", r.status, r.body)
		}
		if strings.Contains(r.body, `"rank":1`) {
			t.Fatalf("a rank before the draw: %s", r.body)
		}
	}
	var view struct {
		Nets []queue.NetworkCount `json:"prequeueNetworks"`
	}
	h.do(t, "GET", path, "", auth, nil).json(t, &view)
	if len(view.Nets) != 1 || view.Nets[0] != (queue.NetworkCount{Network: "127.0.0.0/24", Entries: 3}) {
		t.Fatalf("prequeueNetworks %+v", view.Nets)
	}
	if r := h.do(t, "PUT", path, `{"opensAt":"`+rfc(-time.Second)+`"}`, auth, nil); r.status != 200 {
		t.Fatalf("PUT %d %s", r.status, r.body)
	}
	if st, err := h.eng.Draw(ctx, h.room, queue.DrawOptions{}); err != nil || st != queue.DrawDone {
		t.Fatalf("draw %v %v", st, err)
	}
	var after queue.DrawInfo
	h.do(t, "GET", "/api/rooms/"+h.room+"/draw", "", nil, nil).json(t, &after)
	if !after.Done || after.Commitment != info.Commitment || len(after.Tickets) != 3 {
		t.Fatalf("after the draw: %+v", after)
	}
	if err := draw.Verify(after.Commitment, after.Seed, after.Tickets); err != nil {
		t.Fatal(err)
	}
	if r := h.do(t, "GET", "/api/rooms/no-such-room/draw", "", nil, nil); r.status != 404 {
		t.Errorf("unknown room: %d", r.status)
	}
}

// TestPrequeuedStreamsLearnTheDraw: pages in the pre-queue hold their SSE
// stream; when the issuer draws, each gets its drawn rank and keeps its
// pre-queue ticket.
func TestPrequeuedStreamsLearnTheDraw(t *testing.T) {
	t.Parallel()
	rdb := servicetest.Redis(t)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	name := servicetest.RoomName(t, rdb)
	ctx := context.Background()
	set := room.Defaults(name)
	set.Rate = room.MinRate // nobody is admitted during the test
	pre, open := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	set.PrequeueAt, set.OpensAt = &pre, &open
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	a := startInstance(t, rdb, eng, name, 100*time.Millisecond, true, sse.Options{})
	var clients []*sseClient
	var tickets []int64
	for range 3 {
		jar, _ := cookiejar.New(nil)
		c := follow(t, a.url+"/r/"+name+"/events", jar, "")
		e := c.next(t, eventWait)
		if field(t, e, "status") != "PREQUEUED" || field(t, e, "phase") != "prequeue" {
			t.Fatalf("first event %s", e.Data)
		}
		tk, _ := strconv.ParseInt(field(t, e, "ticket"), 10, 64)
		clients, tickets = append(clients, c), append(tickets, tk)
	}
	now := time.Now()
	set.OpensAt = &now
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	var info queue.DrawInfo
	for deadline := time.Now().Add(10 * time.Second); !info.Done; time.Sleep(50 * time.Millisecond) {
		var err error
		if info, err = eng.DrawInfo(ctx, name); err != nil || time.Now().After(deadline) {
			t.Fatalf("not drawn: %+v %v", info, err)
		}
	}
	for i, c := range clients {
		for deadline := time.Now().Add(5 * time.Second); ; {
			e := c.next(t, time.Until(deadline))
			if field(t, e, "status") != "WAITING" {
				continue
			}
			rank, _ := strconv.Atoi(field(t, e, "rank"))
			if info.Tickets[rank] != tickets[i] || field(t, e, "ticket") != strconv.FormatInt(tickets[i], 10) || field(t, e, "phase") != "open" {
				t.Fatalf("ticket %d after the draw %v: %s", tickets[i], info.Tickets, e.Data)
			}
			break
		}
	}
}
