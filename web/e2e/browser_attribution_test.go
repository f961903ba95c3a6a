package e2e

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jmoiron/sqlx"

	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// TestBrowserJoinCountsForItsCampaign: a buyer with JavaScript who comes by
// a campaign link is counted under that campaign when they join, and when
// they are admitted. A Korean campaign name of 300 bytes is cut to the
// 200-byte bound on a character boundary, and still joins. The first
// buyer's link also has a utm_content and a gclid: their order, placed
// from the page, keeps both.
func TestBrowserJoinCountsForItsCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	alloc := browser(t)
	base, eng, rdb := startServer(t, 250*time.Millisecond)
	name := servicetest.RoomName(t, rdb)
	set := room.Defaults(name)
	set.Rate = room.MinRate // the line forms first
	ctx := context.Background()
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	launch := queue.Campaign{Source: "kakao", Medium: "social", Campaign: "launch"}
	korean := queue.Campaign{Source: "naver", Medium: "cpc", Campaign: strings.Repeat("봄", 100)}   // 300 bytes
	cutKorean := queue.Campaign{Source: "naver", Medium: "cpc", Campaign: strings.Repeat("봄", 66)} // 198 bytes
	addProduct(t, name, "Sneakers", 129000, 5)
	var first context.Context
	for i, c := range []queue.Campaign{launch, korean} {
		tab, cancel := chromedp.NewContext(alloc, chromedp.WithNewBrowserContext())
		t.Cleanup(cancel)
		tctx, tcancel := context.WithTimeout(tab, 30*time.Second)
		t.Cleanup(tcancel)
		q := url.Values{"utm_source": {c.Source}, "utm_medium": {c.Medium}, "utm_campaign": {c.Campaign}}
		if i == 0 {
			q.Set("utm_content", "hero")
			q.Set("gclid", "Cj0KCQ-x_1")
			first = tctx
		}
		want := []string{"You are next", "1 person ahead of you"}[i]
		if err := chromedp.Do(tctx, chromedp.Navigate(base+"/r/"+name+"?"+q.Encode()), waitText(want)); err != nil {
			text, _ := chromedp.Run(tctx, chromedp.Text(chromedp.ID("wr-rank")))
			t.Fatalf("%s: %v (rank text %q)", c.Source, err, text)
		}
	}
	counts := func() map[queue.Campaign]queue.CampaignCount {
		got, err := eng.Attribution(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		m := map[queue.Campaign]queue.CampaignCount{}
		for _, c := range got {
			m[c.Campaign] = c
		}
		return m
	}
	got := counts()
	if len(got) != 2 || got[launch].Joined != 1 || got[cutKorean].Joined != 1 {
		t.Fatalf("attribution after the joins: %+v, want one join each for %s and the cut Korean campaign", got, launch.Label())
	}
	set.Rate = 10
	if err := eng.SaveRoom(ctx, name, set); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for got = counts(); got[launch].Admitted != 1 || got[cutKorean].Admitted != 1; got = counts() {
		if time.Now().After(deadline) {
			t.Fatalf("attribution after admission: %+v, want each admitted", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := chromedp.Do(first, chromedp.WaitVisible(chromedp.ID("wr-order")), chromedp.Click(chromedp.CSS("#wr-order button")),
		chromedp.WaitVisible(chromedp.CSS(".order-id"))); err != nil {
		t.Fatalf("the first buyer's order: %v", err)
	}
	db, err := sqlx.Open("postgres", orderDB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var kept [3]string
	if err := db.QueryRowx(`SELECT utm_source, COALESCE(utm_content, ''), COALESCE(gclid, '') FROM orders WHERE room = $1`, name).
		Scan(&kept[0], &kept[1], &kept[2]); err != nil || kept != [3]string{"kakao", "hero", "Cj0KCQ-x_1"} {
		t.Fatalf("the order's attribution %q (%v), want kakao, hero and the gclid", kept, err)
	}
}
