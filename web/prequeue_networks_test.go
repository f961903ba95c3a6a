package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"waitingroom/server/queue"
)

// TestFlagNetworks: a network is flagged from the threshold on, not
// before.
func TestFlagNetworks(t *testing.T) {
	t.Parallel()
	nets := []queue.NetworkCount{{Network: "10.1.1.0/24", Entries: 51}, {Network: "10.2.2.0/24", Entries: 50},
		{Network: "2001:db8:1:2::/64", Entries: 49}, {Network: "10.3.3.0/24", Entries: 1}}
	for _, tc := range []struct {
		threshold int64
		want      []bool
	}{
		{50, []bool{true, true, false, false}},
		{51, []bool{true, false, false, false}},
		{1, []bool{true, true, true, true}},
		{1000, []bool{false, false, false, false}},
	} {
		got := flagNetworks(nets, tc.threshold)
		for i, n := range got {
			if n.Flagged != tc.want[i] || n.NetworkCount != nets[i] {
				t.Errorf("threshold %d: %+v, want flagged %v", tc.threshold, n, tc.want[i])
			}
		}
		if rows := flaggedRows(got); len(rows) != count(tc.want) {
			t.Errorf("threshold %d: %d dashboard rows", tc.threshold, len(rows))
		}
	}
	if got := flagNetworks(nil, 50); got == nil || len(got) != 0 {
		t.Errorf("no networks: %#v, want an empty list (JSON [])", got)
	}
}

func count(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// countingLister counts its reads.
type countingLister struct {
	reads int
	err   error
}

func (c *countingLister) Networks(context.Context, string, int) ([]queue.NetworkCount, error) {
	c.reads++
	return []queue.NetworkCount{{Network: "10.0.0.0/24", Entries: int64(c.reads)}}, c.err
}

// TestNetworksRecent: the dashboard reads a room's networks again only
// when its last read is networksFresh old; the admin API always reads.
func TestNetworksRecent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := &countingLister{}
	f := newNetworkFlags(l, 0)
	if f.threshold != DefaultNetworkFlagJoins {
		t.Errorf("threshold %d, want the default %d", f.threshold, DefaultNetworkFlagJoins)
	}
	at := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		now   time.Time
		room  string
		reads int
	}{
		{at, "a", 1},
		{at.Add(networksFresh - time.Millisecond), "a", 1},
		{at, "b", 2},
		{at.Add(networksFresh), "a", 3},
		{at.Add(-time.Second), "a", 4}, // a clock that went back reads again
	} {
		nets, err := f.recent(ctx, tc.room, tc.now)
		if err != nil || len(nets) != 1 || l.reads != tc.reads {
			t.Errorf("%s at %v: %v %v after %d reads, want %d", tc.room, tc.now.Sub(at), nets, err, l.reads, tc.reads)
		}
	}
	if _, err := f.read(ctx, "a"); err != nil || l.reads != 5 {
		t.Errorf("read: %v, %d reads", err, l.reads)
	}
	l.err = errors.New("redis: down")
	if _, err := f.recent(ctx, "c", at); err == nil {
		t.Error("a failed read is not said")
	}
	for i := range networksCached + 10 {
		f.recent(ctx, strings.Repeat("r", i%50+1)+string(rune('a'+i/50)), at.Add(time.Hour))
	}
	if n := len(f.cache); n > networksCached {
		t.Errorf("%d rooms cached, want at most %d", n, networksCached)
	}
}

// TestFlaggedNetworks: pre-queue joins from four networks through a
// trusted proxy; the admin API flags the two with 3 joins or more, and
// the dashboard lists them, in words, in English and Korean.
func TestFlaggedNetworks(t *testing.T) {
	t.Parallel()
	h, _ := newConsoleHarness(t, func(o *Options) {
		o.NetworkFlagJoins = 3
		o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	auth := map[string]string{"Authorization": "Bearer " + testAdminToken}
	path := "/api/admin/rooms/" + h.room
	c, _ := signIn(t, h.srv, testAdminToken)
	dash := func(lang string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", h.srv.URL+"/admin/rooms/"+h.room, nil)
		req.Header.Set("Accept-Language", lang)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("dashboard: %d %s", resp.StatusCode, b)
		}
		return string(b)
	}
	if html := dash("en"); strings.Contains(html, "dash-networks") || strings.Contains(html, "dash-flagged") {
		t.Error("a room without a pre-queue shows networks")
	}
	h.web.nets.cache = map[string]readNetworks{} // the dashboard's read is up to networksFresh old
	if r := h.do(t, "PUT", path, `{"prequeueAt":"`+rfc(-time.Hour)+`","opensAt":"`+rfc(time.Hour)+`"}`, auth, nil); r.status != 200 {
		t.Fatalf("PUT %d %s", r.status, r.body)
	}
	joins := []struct {
		addr string
		n    int
	}{{"10.1.1.7", 4}, {"10.2.2.9", 3}, {"2001:db8:1:2::5", 2}, {"10.3.3.3", 1}}
	for _, j := range joins {
		for i := range j.n {
			if r := h.do(t, "POST", "/api/rooms/"+h.room+"/queue", "", map[string]string{"X-Forwarded-For": j.addr}, nil); r.status != 200 {
				t.Fatalf("join %d from %s: %d %s", i, j.addr, r.status, r.body)
			}
		}
	}
	var view struct {
		Nets []networkView `json:"prequeueNetworks"`
	}
	h.do(t, "GET", path, "", auth, nil).json(t, &view)
	want := []networkView{
		{queue.NetworkCount{Network: "10.1.1.0/24", Entries: 4}, true},
		{queue.NetworkCount{Network: "10.2.2.0/24", Entries: 3}, true},
		{queue.NetworkCount{Network: "2001:db8:1:2::/64", Entries: 2}, false},
		{queue.NetworkCount{Network: "10.3.3.0/24", Entries: 1}, false},
	}
	if len(view.Nets) != len(want) {
		t.Fatalf("prequeueNetworks %+v", view.Nets)
	}
	for i := range want {
		if view.Nets[i] != want[i] {
			t.Errorf("prequeueNetworks[%d] = %+v, want %+v", i, view.Nets[i], want[i])
		}
	}

	for _, tc := range []struct {
		lang             string
		badge, rule, row string
	}{
		{"en", "Networks flagged: 2", "flagged from 3 pre-queue joins on", ">Flagged</span>"},
		{"ko", "주의 네트워크 2개", "3건 이상인 네트워크", ">주의</span>"},
	} {
		html := dash(tc.lang)
		if i := strings.Index(html, `id="dash-flagged"`); i < 0 || !strings.Contains(html[i:i+200], tc.badge+"</a>") {
			t.Errorf("%s: no badge %q at the top", tc.lang, tc.badge)
		}
		if !strings.Contains(html, tc.rule) {
			t.Errorf("%s: the page does not say the flag's rule %q", tc.lang, tc.rule)
		}
		table := html[strings.Index(html, `id="dash-networks"`):]
		table = table[:strings.Index(table, "</table>")]
		if strings.Count(table, tc.row) != 2 || strings.Count(table, "<tr>") != 3 {
			t.Errorf("%s: the flagged networks are not each marked in words:\n%s", tc.lang, table)
		}
		for _, n := range []string{"10.1.1.0/24", "10.2.2.0/24"} {
			if !strings.Contains(table, n) {
				t.Errorf("%s: %s is not listed", tc.lang, n)
			}
		}
		for _, n := range []string{"2001:db8:1:2::/64", "10.3.3.0/24"} {
			if strings.Contains(table, n) {
				t.Errorf("%s: %s is listed as flagged", tc.lang, n)
			}
		}
	}
}
