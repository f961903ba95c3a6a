package web

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"waitingroom/server/audit"
	"waitingroom/server/bypass"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/store"
	"waitingroom/server/store/storetest"
)

// bypassHarness is a harness that trusts the loopback proxy, keeps test
// links and records its audit log, its room set by mut.
func bypassHarness(t *testing.T, mut func(*room.Settings)) (*harness, *audit.Log) {
	t.Helper()
	db := storetest.Migrated(t, store.SQLite)
	log := audit.New(db)
	rdb := servicetest.Redis(t)
	links := bypass.New(queue.New(rdb, queue.DefaultNamespace(rdb)), testSigner(t), time.Now)
	h := newHarness(t, func(o *Options) { o.TrustedProxies, o.Audit, o.TestLinks = loopbackProxy, log, links })
	h.setRoom(t, mut)
	return h, log
}

func actions(t *testing.T, log *audit.Log, name string) []string {
	t.Helper()
	es, err := log.List(context.Background(), audit.Filter{Room: name})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Action+" "+e.Target)
	}
	return out
}

// TestStaffBypass: a join from the room's staff networks is let in at
// once, outside the line, recorded and counted apart; one from anywhere
// else waits; a staff member who waited gives up their place; with every
// slot of maxActive held a staff join waits in the line as a buyer does;
// a room whose sale has ended lets no staff in.
func TestStaffBypass(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, log := bypassHarness(t, func(s *room.Settings) {
		s.Rate, s.MaxActive, s.StaffNetworks = room.MinRate, 2, []string{"198.51.100.0/24", "2001:db8:5::/48"}
	})
	q := "/api/rooms/" + h.room + "/queue"
	from := func(ip string) map[string]string { return map[string]string{"X-Forwarded-For": ip} }
	pos := func(r reply) queue.Position {
		var p queue.Position
		r.json(t, &p)
		return p
	}
	// A buyer waits.
	buyer := h.do(t, "POST", q, "", from("203.0.113.4"), nil)
	if p := pos(buyer); buyer.status != 200 || p.Status != queue.StatusWaiting {
		t.Fatalf("a buyer: %d %s", buyer.status, buyer.body)
	}
	// A staff member from the office: in at once.
	staff := h.do(t, "POST", q, "", from("198.51.100.23"), nil)
	if p := pos(staff); staff.status != 200 || p.Status != queue.StatusReady || p.EntryToken == nil || staff.cookie() == nil {
		t.Fatalf("staff: %d %s", staff.status, staff.body)
	}
	// A colleague who waited from home, then joins from the VPN (IPv6).
	colleague := h.do(t, "POST", q, "", from("203.0.113.77"), nil)
	c := colleague.cookie()
	if again := h.do(t, "POST", q, "", from("2001:db8:5:1::9"), c); pos(again).Status != queue.StatusReady {
		t.Fatalf("the colleague from the VPN: %d %s", again.status, again.body)
	}
	st, err := h.eng.Stats(ctx, h.room)
	if err != nil || st.Bypassed != 2 || st.Admitted != 0 || st.Waiting != 1 || st.Leaves != 1 {
		t.Fatalf("stats %+v %v: want 2 bypassed, the buyer alone waiting, the colleague's place given up", st, err)
	}
	// Both slots are held: a third staff join takes none, and waits in
	// the line as a buyer does.
	full := h.do(t, "POST", q, "", from("198.51.100.24"), nil)
	if p := pos(full); full.status != 200 || p.Status != queue.StatusWaiting {
		t.Fatalf("a staff join with every slot held: %d %s, want WAITING", full.status, full.body)
	}
	if st, err := h.eng.Stats(ctx, h.room); err != nil || st.Bypassed != 2 || st.Waiting != 2 {
		t.Fatalf("stats %+v %v: want 2 bypassed, and the third staff join waiting", st, err)
	}
	// The no-JavaScript form: to the status page, which says READY.
	resp := h.postForm(t, "/r/"+h.room+"/join", url.Values{}, c, "en")
	if resp.StatusCode != 303 || !strings.HasSuffix(resp.Header.Get("Location"), "/r/"+h.room+"/status") {
		t.Fatalf("the form from the office: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := actions(t, log, h.room); len(got) != 2 || got[0] != "bypass.enter staff" {
		t.Fatalf("the audit log: %q, want two staff entries", got)
	}
	h.setRoom(t, func(s *room.Settings) { s.Mode = room.ModeClosed })
	if r := h.do(t, "POST", q, "", from("198.51.100.25"), nil); r.status != 409 || errorCode(t, r) != "sale_ended" {
		t.Fatalf("a staff join once the sale ended: %d %s, want 409 sale_ended", r.status, r.body)
	}
}

// TestTestLinks: the admin API makes a link shown once; following it
// changes nothing (a crawler may); its button lets the holder in, up to
// its uses; the list counts them and never shows the address; a revoked
// link is gone. Each step is in the audit log.
func TestTestLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, log := bypassHarness(t, func(s *room.Settings) { s.Rate = room.MinRate })
	api := "/api/admin/rooms/" + h.room + "/bypass"
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	for _, c := range []struct{ body, code string }{
		{`{"uses":0}`, "bad_link"},
		{`{"uses":1,"expiresAt":"2020-01-01T00:00:00Z"}`, "bad_link"},
		{`{"uses":1,"url":"x"}`, "bad_json"},
	} {
		if r := h.do(t, "POST", api, c.body, auth, nil); r.status != 400 || errorCode(t, r) != c.code {
			t.Fatalf("%s: %d %s, want 400 %s", c.body, r.status, r.body, c.code)
		}
	}
	made := h.do(t, "POST", api, `{"uses":1}`, auth, nil)
	var m struct {
		ID, URL string
		Uses    int
	}
	made.json(t, &m)
	u, err := url.Parse(m.URL)
	if made.status != 201 || err != nil || u.Path != "/r/"+h.room+"/bypass" || m.Uses != 1 {
		t.Fatalf("make: %d %s", made.status, made.body)
	}
	tok := u.Query().Get("t")
	// Following the link shows the button and uses nothing.
	get := func(tok string) (int, string) {
		resp, err := http.Get(h.srv.URL + u.Path + "?t=" + url.QueryEscape(tok))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, page := get(tok); status != 200 || !strings.Contains(page, `name="t" value="`+tok+`"`) {
		t.Fatalf("the link's page: %d %s", status, page)
	}
	if status, _ := get(tok + "x"); status != 403 {
		t.Fatalf("an altered link's page: %d, want 403", status)
	}
	if st, _ := h.eng.Stats(ctx, h.room); st.Bypassed != 0 {
		t.Fatal("following the link let someone in")
	}
	resp := h.postForm(t, u.Path, url.Values{"t": {tok}}, nil, "en")
	if resp.StatusCode != 303 || !strings.HasSuffix(resp.Header.Get("Location"), "/status") {
		t.Fatalf("the link's button: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	var holder *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "wr_vid" {
			holder = c
		}
	}
	if p := h.do(t, "GET", "/api/rooms/"+h.room+"/queue/position", "", nil, holder); !strings.Contains(p.body, `"READY"`) {
		t.Fatalf("the holder's position: %s", p.body)
	}
	again := h.postForm(t, u.Path, url.Values{"t": {tok}}, nil, "ko")
	b, _ := io.ReadAll(again.Body)
	if again.StatusCode != 403 || !strings.Contains(string(b), "허용된 횟수만큼 이미 사용") {
		t.Fatalf("the link used up: %d %s", again.StatusCode, b)
	}
	list := h.do(t, "GET", api, "", auth, nil)
	var l struct{ Links []queue.BypassLink }
	list.json(t, &l)
	if len(l.Links) != 1 || l.Links[0].Used != 1 || strings.Contains(list.body, tok) {
		t.Fatalf("the list: %s", list.body)
	}
	if r := h.do(t, "DELETE", api+"/"+m.ID, "", auth, nil); r.status != 204 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	if r := h.do(t, "DELETE", api+"/"+m.ID, "", auth, nil); r.status != 404 || errorCode(t, r) != "link_not_found" {
		t.Fatalf("revoke again: %d %s", r.status, r.body)
	}
	want := []string{"bypass.revoke " + m.ID, "bypass.enter link " + m.ID, "bypass.link " + m.ID}
	if got := actions(t, log, h.room); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the audit log: %q, want %q", got, want)
	}
}
