package console

import (
	"testing"

	"waitingroom/server/order"
	"waitingroom/server/queue"
)

// TestAttributionFoldsOrders: orders and link clicks count under the
// campaign the line counts their joins under (queue.Campaign.Counted).
func TestAttributionFoldsOrders(t *testing.T) {
	type line struct {
		source, medium, campaign string
		joined, orders, clicks   int64
	}
	cases := []struct {
		name   string
		counts []queue.CampaignCount
		sales  []order.CampaignSale
		clicks map[campaignKey]int64
		want   []line
	}{
		{"case folds into the join's campaign",
			[]queue.CampaignCount{{Campaign: queue.Campaign{Source: "kakao", Medium: "social", Campaign: "x"}, Joined: 3}},
			[]order.CampaignSale{{Source: "Kakao", Medium: "Social", Campaign: "x", Orders: 2}},
			nil,
			[]line{{"kakao", "social", "x", 3, 2, 0}}},
		{"a Korean source is (other), as joins count it",
			[]queue.CampaignCount{{Campaign: queue.OtherCampaign, Joined: 4}},
			[]order.CampaignSale{{Source: "카카오", Medium: "social", Campaign: "봄", Orders: 1}},
			map[campaignKey]int64{{"카카오", "social", "봄"}: 5},
			[]line{{"(other)", "", "", 4, 1, 5}}},
		{"the campaign's name is kept as given",
			nil,
			[]order.CampaignSale{{Source: "naver", Medium: "cpc", Campaign: "Spring", Orders: 1}, {Source: "NAVER", Medium: "cpc", Campaign: "spring", Orders: 1}},
			nil,
			[]line{{"naver", "cpc", "Spring", 0, 1, 0}, {"naver", "cpc", "spring", 0, 1, 0}}},
		{"direct stays direct",
			[]queue.CampaignCount{{Joined: 2}},
			[]order.CampaignSale{{Orders: 1}},
			nil,
			[]line{{"", "", "", 2, 1, 0}}},
		{"clicks fold too",
			nil,
			nil,
			map[campaignKey]int64{{"Instagram", "Social", "a"}: 2, {"instagram", "social", "a"}: 1},
			[]line{{"instagram", "social", "a", 0, 0, 3}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lines, _ := attributionLines(tc.counts, tc.sales, tc.clicks, "en")
			if len(lines) != len(tc.want) {
				t.Fatalf("%d lines, want %d: %+v", len(lines), len(tc.want), lines)
			}
			for i, w := range tc.want {
				l := lines[i]
				if got := (line{l.Source, l.Medium, l.Campaign, l.Joined, l.Orders, l.Clicks}); got != w {
					t.Errorf("line %d: %+v, want %+v", i, got, w)
				}
			}
		})
	}
}
