package queue

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"waitingroom/server/room"
)

func TestCampaignKeyRoundTrip(t *testing.T) {
	for _, c := range []Campaign{
		{Source: "news", Medium: "email", Campaign: "spring"},
		{Source: "a / b", Medium: "", Campaign: "c"},
		{Source: "", Medium: "", Campaign: "only"},
		{Source: "(other)", Medium: "x"}, // a utm_source that reads like the bucket
		{Source: "뉴스", Medium: "메일", Campaign: "봄 세일"},
	} {
		if got := campaignOfKey(c.key()); got != c {
			t.Errorf("%+v came back as %+v", c, got)
		}
		if c.key() == otherKey {
			t.Errorf("%+v has the key of the (other) bucket", c)
		}
	}
	// The web layer's (other) for values that are not valid is the bucket.
	if OtherCampaign.key() != otherKey || campaignOfKey(otherKey) != OtherCampaign {
		t.Error("OtherCampaign is not the (other) bucket")
	}
	if (Campaign{}).key() != "" || (Campaign{}).Label() != "direct" {
		t.Error("the zero Campaign is not direct")
	}
}

// counts returns room's attribution by campaign.
func counts(t *testing.T, e *Engine, name string) map[Campaign]CampaignCount {
	t.Helper()
	cs, err := e.Attribution(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	m := map[Campaign]CampaignCount{}
	for _, c := range cs {
		if _, dup := m[c.Campaign]; dup {
			t.Fatalf("campaign %+v listed twice: %+v", c.Campaign, cs)
		}
		m[c.Campaign] = c
	}
	return m
}

func TestAttributionJoinsAndAdmissions(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000 }))
	spring := Campaign{Source: "news", Medium: "email", Campaign: "spring"}
	ads := Campaign{Source: "ads", Medium: "cpc", Campaign: "spring"}
	plan := []struct {
		c    Campaign
		n    int
		left int // of them leave before the tick
	}{{spring, 3, 0}, {ads, 2, 1}, {Campaign{}, 4, 1}}
	for _, p := range plan {
		vs := visitors(t, p.n)
		for _, v := range vs {
			for range 2 { // a repeated enter keeps the ticket and counts once
				if _, err := e.EnterFrom(ctx, name, v, "", p.c); err != nil {
					t.Fatal(err)
				}
			}
			// A later enter from another campaign does not move the visitor.
			if _, err := e.EnterFrom(ctx, name, v, "", Campaign{Source: "late"}); err != nil {
				t.Fatal(err)
			}
		}
		for _, v := range vs[:p.left] {
			if ok, err := e.Leave(ctx, name, v); err != nil || !ok {
				t.Fatalf("leave: %v %v", ok, err)
			}
		}
	}
	if a := admitAfter(t, e, name, 20*time.Millisecond, time.Second, 64); len(a.Visitors) != 7 {
		t.Fatalf("admitted %d, want 7", len(a.Visitors))
	}
	got := counts(t, e, name)
	for _, p := range plan {
		want := CampaignCount{Campaign: p.c, Joined: int64(p.n), Admitted: int64(p.n - p.left)}
		if got[p.c] != want {
			t.Errorf("%s: %+v, want %+v", p.c.Label(), got[p.c], want)
		}
	}
	if len(got) != len(plan) {
		t.Errorf("%d campaigns, want %d: %+v", len(got), len(plan), got)
	}
	// Admitted and departed visitors keep no campaign id.
	if n, err := rdb.HLen(ctx, testKeys(rdb, name).key("campof")).Result(); err != nil || n != 0 {
		t.Fatalf("%d visitors still hold a campaign id (%v)", n, err)
	}
}

func TestAttributionCapsCampaigns(t *testing.T) {
	if testing.Short() {
		t.Skip("over a thousand enters")
	}
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(nil))
	const extra = 5
	vs := visitors(t, MaxCampaigns+extra+1)
	for i, v := range vs[:MaxCampaigns+extra] {
		src := fmt.Sprint("s", i/MaxCampaignsPerSource) // each source's share, in full
		if _, err := e.EnterFrom(ctx, name, v, "", Campaign{Source: src, Campaign: fmt.Sprint("c", i)}); err != nil {
			t.Fatal(err)
		}
	}
	// A campaign already known still counts apart past the cap.
	if _, err := e.EnterFrom(ctx, name, vs[len(vs)-1], "", Campaign{Source: "s0", Campaign: "c7"}); err != nil {
		t.Fatal(err)
	}
	got := counts(t, e, name)
	if len(got) != MaxCampaigns+1 {
		t.Fatalf("%d campaigns counted apart, want %d and (other)", len(got), MaxCampaigns)
	}
	if o := got[OtherCampaign]; o.Joined != extra {
		t.Fatalf("(other): %+v, want %d joins", o, extra)
	}
	if c := got[Campaign{Source: "s0", Campaign: "c7"}]; c.Joined != 2 {
		t.Fatalf("c7: %+v, want 2 joins", c)
	}
	if n, _ := rdb.HLen(ctx, testKeys(rdb, name).key("camps")).Result(); n != MaxCampaigns+1 {
		t.Fatalf("%d campaign ids stored, want %d", n, MaxCampaigns+1)
	}
}

func TestDeleteRoomDeletesAttribution(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(nil))
	c := Campaign{Source: "news", Medium: "email", Campaign: "spring"}
	for _, v := range visitors(t, 3) {
		if _, err := e.EnterFrom(ctx, name, v, "", c); err != nil {
			t.Fatal(err)
		}
	}
	k := testKeys(rdb, name)
	attrKeys := []string{k.key("camps"), k.key("attr"), k.key("camp")}
	if n, _ := rdb.Exists(ctx, attrKeys...).Result(); n != 3 {
		t.Fatalf("%d of the attribution keys exist before the deletion, want 3", n)
	}
	// The side keys: a passed-over visitor's id, the cells' base.
	rdb.HSet(ctx, k.key("campof"), "v", "1")
	rdb.Set(ctx, k.key("campbase"), "1", 0)
	attrKeys = append(attrKeys, k.key("campof"), k.key("campbase"))
	if _, err := e.DeleteRoom(ctx, name); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.Exists(ctx, attrKeys...).Result(); n != 0 {
		t.Fatalf("%d attribution keys remain after the deletion", n)
	}
	if got := counts(t, e, name); len(got) != 0 {
		t.Fatalf("a deleted room's attribution: %+v", got)
	}
}

// TestAttributionThroughTheDraw: pre-queued buyers keep their campaign
// through the draw; a tick reports the pre-queue and the rate as set.
func TestAttributionThroughTheDraw(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := prequeueRoom(t)
	c := Campaign{Source: "sns", Medium: "social", Campaign: "launch"}
	vs := visitors(t, 4)
	for i, v := range vs {
		camp := c
		if i == 3 {
			camp = Campaign{}
		}
		if p, err := e.EnterFrom(ctx, name, v, "", camp); err != nil || p.Status != StatusPrequeued {
			t.Fatalf("enter: %+v %v", p, err)
		}
	}
	a, err := e.Admit(ctx, name, time.Second, tokens(t, 4))
	if err != nil || a.Prequeued != 4 || a.Rate != room.Defaults("x").Rate || len(a.Visitors) != 0 {
		t.Fatalf("tick in the pre-queue: %+v %v; want 4 pre-queued at the default rate", a, err)
	}
	openNow(t, e, name)
	if _, err := e.Admit(ctx, name, time.Second, nil); err != nil { // freezes
		t.Fatal(err)
	}
	if st, err := e.Draw(ctx, name, DrawOptions{}); err != nil || st != DrawDone {
		t.Fatalf("draw: %v %v", st, err)
	}
	s, _ := e.Room(ctx, name)
	s.Rate = 1000
	if err := e.SaveRoom(ctx, name, s); err != nil {
		t.Fatal(err)
	}
	if a := admitAfter(t, e, name, 20*time.Millisecond, time.Second, 64); len(a.Visitors) != 4 || a.Prequeued != 0 {
		t.Fatalf("after the draw: %+v", a)
	}
	got := counts(t, e, name)
	if got[c] != (CampaignCount{Campaign: c, Joined: 3, Admitted: 3}) || got[Campaign{}] != (CampaignCount{Joined: 1, Admitted: 1}) {
		t.Fatalf("attribution through the draw: %+v", got)
	}
	if n, _ := rdb.HLen(ctx, testKeys(rdb, name).key("campof")).Result(); n != 0 {
		t.Fatalf("%d campaign ids left", n)
	}
}

// TestAttributionCountsRealLinks: a campaign counts apart only when its
// source and medium are short tokens (in lower case), and while its source
// has fewer than MaxCampaignsPerSource campaigns; the rest, (other).
func TestAttributionCountsRealLinks(t *testing.T) {
	ctx := context.Background()
	e, name, _ := newRoom(t, settings(nil))
	joins := []Campaign{
		{Source: "Kakao", Medium: "Social", Campaign: "Launch"}, // lower-cased source and medium
		{Source: "kakao", Medium: "social", Campaign: "Launch"},
		{Source: "news.letter_2", Medium: "e-mail", Campaign: "봄 세일"},
		{Source: "a b", Medium: "social", Campaign: "x"},                   // not a token
		{Source: "kakao", Medium: "so/cial", Campaign: "x"},                // not a token
		{Source: strings.Repeat("s", 65), Medium: "social", Campaign: "x"}, // too long
		{Medium: "social", Campaign: "x"},                                  // no source
		OtherCampaign,
	}
	// One source's share, then one more of that source.
	for i := range MaxCampaignsPerSource + 1 {
		joins = append(joins, Campaign{Source: "spam", Medium: "x", Campaign: fmt.Sprint(i)})
	}
	for i, v := range visitors(t, len(joins)) {
		if _, err := e.EnterFrom(ctx, name, v, "", joins[i]); err != nil {
			t.Fatal(err)
		}
	}
	got := counts(t, e, name)
	for c, want := range map[Campaign]int64{
		{Source: "kakao", Medium: "social", Campaign: "Launch"}:       2,
		{Source: "news.letter_2", Medium: "e-mail", Campaign: "봄 세일"}: 1,
		{Source: "spam", Medium: "x", Campaign: "0"}:                  1,
		OtherCampaign: 6,
	} {
		if got[c].Joined != want {
			t.Errorf("%s: %d joins, want %d", c.Label(), got[c].Joined, want)
		}
	}
	if n := len(got); n != 3+MaxCampaignsPerSource {
		t.Errorf("%d campaigns counted apart, want %d", n, 3+MaxCampaignsPerSource)
	}
}

// TestAttributionOfAPassedOverBuyer: a buyer away at their turn is passed
// over; their campaign goes aside with them (their ticket's cell is behind
// the head, and may be dropped), and counts when they come back and are
// let in.
func TestAttributionOfAPassedOverBuyer(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000; s.AbandonAfterSeconds = 60 }))
	c := Campaign{Source: "kakao", Medium: "social", Campaign: "launch"}
	vs := visitors(t, 3)
	for _, v := range vs {
		if _, err := e.EnterFrom(ctx, name, v, "", c); err != nil {
			t.Fatal(err)
		}
	}
	lastSeen(t, e, rdb, name, 2, 3*time.Minute)
	if a := admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 2); len(a.Visitors) != 2 || a.Visitors[1] != vs[2] {
		t.Fatalf("admitted %v, want the first and the third", a.Visitors)
	}
	k := testKeys(rdb, name)
	rdb.Del(ctx, k.key("camp")) // as when the cells behind the head are dropped
	if p, err := e.Position(ctx, name, vs[1]); err != nil || p.Status != StatusWaiting {
		t.Fatalf("the returning buyer: %+v %v", p, err)
	}
	if a := admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 1); len(a.Visitors) != 1 || a.Visitors[0] != vs[1] {
		t.Fatalf("admitted %v, want the returning buyer", a.Visitors)
	}
	if got := counts(t, e, name); len(got) != 1 || got[c] != (CampaignCount{Campaign: c, Joined: 3, Admitted: 3}) {
		t.Fatalf("attribution %+v, want 3 joined and admitted for %s", got, c.Label())
	}
	if n, _ := rdb.HLen(ctx, k.key("campof")).Result(); n != 0 {
		t.Fatalf("%d campaign ids left aside", n)
	}
}

// TestCampaignCellsFollowTheHead: after a long history the cells behind the
// head are dropped (the string stays as long as the line) and the tickets
// still waiting keep their campaigns.
func TestCampaignCellsFollowTheHead(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := newRoom(t, settings(func(s *room.Settings) { s.Rate = 1000 }))
	k := testKeys(rdb, name)
	const past = 70000 // tickets already served, more than a chunk
	rdb.Set(ctx, k.key("seq"), past, 0)
	rdb.Set(ctx, k.key("head"), past, 0)
	cs := []Campaign{{Source: "a", Medium: "x", Campaign: "1"}, {Source: "b", Medium: "x", Campaign: "2"}, {}, {Source: "a", Medium: "x", Campaign: "1"}}
	for i, v := range visitors(t, len(cs)) {
		if _, err := e.EnterFrom(ctx, name, v, "", cs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for range cs {
		if a := admitAfter(t, e, name, 20*time.Millisecond, 10*time.Millisecond, 1); len(a.Visitors) != 1 {
			t.Fatalf("admitted %v, want one", a.Visitors)
		}
		if n, _ := rdb.StrLen(ctx, k.key("camp")).Result(); n > 64 {
			t.Fatalf("the campaign cells are %d bytes after a tick, want the line's only", n)
		}
	}
	if b, _ := rdb.Get(ctx, k.key("campbase")).Int64(); b < past {
		t.Fatalf("campbase %d, want at least %d", b, past)
	}
	got := counts(t, e, name)
	for c, n := range map[Campaign]int64{cs[0]: 2, cs[1]: 1, {}: 1} {
		if got[c] != (CampaignCount{Campaign: c, Joined: n, Admitted: n}) {
			t.Errorf("%s: %+v, want %d joined and admitted", c.Label(), got[c], n)
		}
	}
}
