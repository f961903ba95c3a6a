package web

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/token"
	"waitingroom/server/visitor"
)

// attributionRow returns the figures of the attribution table's row that
// contains marker, by class ("joined", "orders", …).
func attributionRow(t *testing.T, body, marker string) map[string]string {
	t.Helper()
	amount := regexp.MustCompile(`<span class="amount">([^<]*)</span>`)
	cell := regexp.MustCompile(`(?s)class="num ([a-z-]+)">(.*?)</td>`)
	for _, row := range strings.Split(body, "<tr") {
		if !strings.Contains(row, marker) {
			continue
		}
		got := map[string]string{}
		for _, m := range cell.FindAllStringSubmatch(row, -1) {
			v := strings.TrimSpace(m[2])
			if amounts := amount.FindAllStringSubmatch(v, -1); amounts != nil {
				var parts []string
				for _, a := range amounts {
					parts = append(parts, a[1])
				}
				v = strings.Join(parts, "+")
			}
			got[m[1]] = v
		}
		return got
	}
	t.Fatalf("no row with %q", marker)
	return nil
}

// TestConsoleAttribution: per campaign, the visitors who joined (drop-outs
// included), were admitted and ordered, the conversion and the revenue.
func TestConsoleAttribution(t *testing.T) {
	t.Parallel()
	oc := newClockedOrdersConsole(t)
	ctx := context.Background()
	shoes := oc.product(t, oc.room, "Sneakers", 129000, "KRW", 10)
	hat := oc.product(t, oc.room, "Hat", 1250, "USD", 10)
	dropouts := queue.Campaign{Source: "instagram", Medium: "social", Campaign: "bf-dropouts"}
	buyers := queue.Campaign{Source: "newsletter", Medium: "email", Campaign: "bf-buyers"}
	join := func(c queue.Campaign, n int) []string {
		var vs []string
		for range n {
			v, _ := visitor.NewID()
			if _, err := oc.eng.EnterFrom(ctx, oc.room, v, "", c); err != nil {
				t.Fatal(err)
			}
			vs = append(vs, v)
		}
		return vs
	}
	join(dropouts, 3)
	bought := join(buyers, 2)
	direct := join(queue.Campaign{}, 1)
	oc.credit(t, oc.room, 20*time.Millisecond)
	toks, err := token.NewBatch(6)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := oc.eng.Admit(ctx, oc.room, time.Second, toks); err != nil || len(a.Visitors) != 6 {
		t.Fatalf("admitted %+v %v", a, err)
	}
	join(dropouts, 1) // joined, still waiting
	oc.place(t, placed{id: orderID(1), room: oc.room, visitor: bought[0], product: shoes, quantity: 2, price: 129000, currency: "KRW",
		utm: order.UTM{Source: buyers.Source, Medium: buyers.Medium, Campaign: buyers.Campaign, Term: "t"}})
	oc.place(t, placed{id: orderID(2), room: oc.room, visitor: direct[0], product: hat, quantity: 1, price: 1250, currency: "USD"})
	oc.place(t, placed{id: orderID(3), room: oc.room, visitor: "api-only", product: shoes, quantity: 1, price: 1000, currency: "KRW",
		utm: order.UTM{Source: "partner", Medium: "api", Campaign: "bf-api"}})
	oc.place(t, placed{id: orderID(4), room: oc.room, visitor: "x", product: shoes, quantity: 5, price: 129000, currency: "KRW",
		utm: order.UTM{Source: dropouts.Source, Medium: dropouts.Medium, Campaign: dropouts.Campaign}, status: order.StatusCancelled})

	resp, body := oc.get(t, "/admin/attribution?room="+oc.room, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("%d: %.300s", resp.StatusCode, body)
	}
	for _, tt := range []struct {
		marker string
		want   map[string]string
	}{
		{"bf-dropouts", map[string]string{"joined": "4", "admitted": "3", "orders": "0", "buyers": "0", "units": "0",
			"conversion": "0.0%", "admitted-ordered": "0.0%", "revenue": "—"}},
		{"bf-buyers", map[string]string{"joined": "2", "admitted": "2", "orders": "1", "buyers": "1", "units": "2",
			"conversion": "50.0%", "admitted-ordered": "50.0%", "revenue": "₩258,000"}},
		{`class="direct"`, map[string]string{"joined": "1", "admitted": "1", "orders": "1", "buyers": "1", "units": "1",
			"conversion": "100.0%", "admitted-ordered": "100.0%", "revenue": "$12.50"}},
		{"bf-api", map[string]string{"joined": "0", "admitted": "0", "orders": "1", "buyers": "1", "units": "1",
			"conversion": "—", "admitted-ordered": "—", "revenue": "₩1,000"}},
		{`class="total"`, map[string]string{"joined": "7", "admitted": "6", "orders": "3", "buyers": "3", "units": "4",
			"conversion": "42.9%", "admitted-ordered": "50.0%", "revenue": "₩259,000+$12.50"}},
	} {
		got := attributionRow(t, body, tt.marker)
		for k, v := range tt.want {
			if got[k] != v {
				t.Errorf("%s: %s is %q, want %q", tt.marker, k, got[k], v)
			}
		}
	}
	if !strings.Contains(body, "Direct") || strings.Index(body, "bf-dropouts") > strings.Index(body, "bf-buyers") {
		t.Error("the most joins come first, and the direct visitors are named")
	}
	_, body = oc.get(t, "/admin/attribution?room="+oc.room, map[string]string{"Accept-Language": "ko-KR,ko;q=0.9"})
	if !strings.Contains(body, "직접 유입") || !strings.Contains(body, "258,000원") {
		t.Errorf("the Korean page: %.300s", body)
	}

	resp, body = oc.get(t, "/admin/attribution?room=Not%20A%20Room", nil)
	if resp.StatusCode != 400 || !strings.Contains(body, "A room name is") {
		t.Fatalf("a bad room: %d %.300s", resp.StatusCode, body)
	}
	resp, body = oc.get(t, "/admin/attribution?room=nobody-came", nil)
	if resp.StatusCode != 200 || !strings.Contains(body, "Nobody has joined or ordered") {
		t.Fatalf("an empty room: %d %.300s", resp.StatusCode, body)
	}
}
