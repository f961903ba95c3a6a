package web

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"waitingroom/server/audit"
	"waitingroom/web/console"
)

func TestConsoleAudit(t *testing.T) {
	oc := newOrdersConsole(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	long := strings.Repeat("가", 100) + "END"
	for _, e := range []audit.Entry{
		{At: at, Actor: "ann", Room: oc.room, Action: "product.update", Target: "42",
			Old: `{"name":"<script>alert(1)</script>","price":100,"stock":3}`, New: `{"name":"Shoes","price":200,"stock":3}`},
		{At: at.Add(time.Minute), Actor: "<b>bob</b>", Room: oc.room, Action: "room.update", Target: "title", Old: long, New: "short"},
		{At: at.Add(2 * time.Minute), Actor: "admin", Room: "other-room", Action: "order.cancel", Target: "abc", Old: "placed", New: "cancelled"},
	} {
		if err := oc.log.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	resp, body := oc.get(t, "/admin/audit?room="+oc.room, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d: %.300s", resp.StatusCode, body)
	}
	for _, want := range []string{
		"27 Nov 2026, 10:00:00 (UTC+09:00)", "27 Nov 2026, 10:01:00 (UTC+09:00)",
		"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;b&gt;bob&lt;/b&gt;", "product.update",
		`<code class="field">name</code>`, `<code class="field">price</code>`, "<details", long,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>alert", "<b>bob", `<code class="field">stock</code>`, "other-room</td>", "order.cancel"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page has %q", bad)
		}
	}
	if strings.Index(body, "room.update") > strings.Index(body, "product.update") {
		t.Error("not newest first")
	}
	// The long value's row shows its start; the whole is in the <details>.
	if m := regexp.MustCompile(`<summary>(가+)…</summary>`).FindStringSubmatch(body); m == nil || len([]rune(m[1])) != console.AuditShort {
		t.Errorf("the long value is not cut to %d characters", console.AuditShort)
	}

	_, body = oc.get(t, "/admin/audit?tz=America/New_York", nil)
	for _, want := range []string{"26 Nov 2026, 20:00:00 (UTC-05:00)", "order.cancel", "other-room", "America/New_York (UTC-05:00)"} {
		if !strings.Contains(body, want) {
			t.Errorf("all rooms in New York time: the page lacks %q", want)
		}
	}
	_, body = oc.get(t, "/admin/audit", map[string]string{"Accept-Language": "ko"})
	if !strings.Contains(body, "2026. 11. 27. 10:02:00 (UTC+09:00)") || !strings.Contains(body, "변경 기록") {
		t.Errorf("the Korean page: %.300s", body)
	}

	for _, q := range []string{"room=Bad%20Room", "before=-1", "before=x", "tz=Nowhere/Land"} {
		resp, body := oc.get(t, "/admin/audit?"+q, nil)
		if resp.StatusCode != 400 || !strings.Contains(body, `role="alert"`) {
			t.Errorf("%s: %d, want 400 with a message", q, resp.StatusCode)
		}
	}
}

func TestConsoleAuditPaging(t *testing.T) {
	oc := newOrdersConsole(t)
	ctx := context.Background()
	n := console.AuditPageSize + 5
	for i := range n {
		if err := oc.log.Record(ctx, audit.Entry{Actor: "ann", Room: oc.room, Action: "room.update", Target: fmt.Sprintf("entry-%03d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	target := regexp.MustCompile(`entry-(\d{3})`)
	older := regexp.MustCompile(`href="([^"]+)" rel="next"`)
	path := "/admin/audit?room=" + oc.room + "&tz=Europe/Paris"
	var seen []string
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatal("too many pages")
		}
		_, body := oc.get(t, path, nil)
		for _, m := range target.FindAllStringSubmatch(body, -1) {
			seen = append(seen, m[1])
		}
		path = ""
		if m := older.FindStringSubmatch(body); m != nil {
			path = strings.ReplaceAll(m[1], "&amp;", "&")
			if !strings.Contains(path, "room="+oc.room) || !strings.Contains(path, "tz=Europe%2FParis") {
				t.Fatalf("the older page lost the filters: %s", path)
			}
		}
	}
	if len(seen) != n {
		t.Fatalf("%d entries over the pages, want %d", len(seen), n)
	}
	for i, s := range seen {
		if want := fmt.Sprintf("%03d", n-1-i); s != want {
			t.Fatalf("entry %d is %s, want %s", i, s, want)
		}
	}
}
