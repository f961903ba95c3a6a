package console

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"

	"waitingroom/server/order"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/views"
)

// CampaignCounts is the line's count of joins and admissions per campaign
// (server/queue's Engine).
type CampaignCounts interface {
	Attribution(ctx context.Context, room string) ([]queue.CampaignCount, error)
}

// campaignKey is a campaign's utm_source, utm_medium and utm_campaign.
type campaignKey struct{ source, medium, campaign string }

// countedKey is the key of the campaign the line counts a join with these
// values under (queue.Campaign.Counted): orders and link clicks fold into
// the same lines as the joins ("Kakao" with "kakao", a Korean source into
// (other)).
func countedKey(source, medium, campaign string) campaignKey {
	c := queue.Campaign{Source: source, Medium: medium, Campaign: campaign}.Counted()
	return campaignKey{c.Source, c.Medium, c.Campaign}
}

// campaignFigures are one campaign's figures from both sides: the line
// (Redis) and the orders (the database).
type campaignFigures struct {
	joined, admitted      int64
	orders, buyers, units int64
	clicks                int64 // of the campaign's share links
	revenue               map[string]int64
}

// attributionPage shows a room's campaigns: who joined, was admitted and
// ordered, the conversion and the revenue. Campaigns whose visitors
// joined and never ordered are there too.
func (s *Console) attributionPage(w http.ResponseWriter, r *http.Request, sess Session) {
	t := ordersText(r)
	co := s.orderAdmin
	if co == nil {
		s.Error(w, r, http.StatusServiceUnavailable, t.ErrNoOrders)
		return
	}
	ctx := r.Context()
	page := s.consolePage(r, sess, t.AttributionTitle, "attribution")
	rooms, err := s.consoleRooms(ctx, co)
	if err != nil {
		s.Error(w, r, http.StatusServiceUnavailable, consoleText(r).ErrUnavailable)
		return
	}
	name := r.URL.Query().Get("room")
	v := views.AttributionView{Rooms: rooms}
	switch {
	case name == "" && len(rooms) > 0:
		name = rooms[0]
	case name != "" && !room.ValidName(name):
		v.Error = t.ErrBadRoom
		s.render(w, r, http.StatusBadRequest, views.ConsoleAttribution(page, v))
		return
	}
	v.Room, v.Rooms = name, roomChoices(rooms, name)
	if name == "" {
		s.render(w, r, http.StatusOK, views.ConsoleAttribution(page, v))
		return
	}
	sales, err := co.CampaignSales(ctx, name)
	if err != nil {
		s.Error(w, r, http.StatusServiceUnavailable, consoleText(r).ErrUnavailable)
		return
	}
	var counts []queue.CampaignCount
	v.Live = true
	if s.campaigns != nil {
		if counts, err = s.campaigns.Attribution(ctx, name); err != nil {
			s.log.Warn("console: attribution", "room", name, "err", err)
			v.Live = false
		}
	} else {
		v.Live = false
	}
	clicks, ok := s.linkClicks(ctx, name)
	v.Links = ok
	v.Lines, v.Total = attributionLines(counts, sales, clicks, Lang(r))
	s.render(w, r, http.StatusOK, views.ConsoleAttribution(page, v))
}

// attributionLines joins the line's counts and the orders per campaign:
// the most joins first, then the most orders. It returns the lines and
// their total.
func attributionLines(counts []queue.CampaignCount, sales []order.CampaignSale, clicks map[campaignKey]int64, lang string) ([]views.AttributionLine, views.AttributionLine) {
	by := map[campaignKey]*campaignFigures{}
	get := func(k campaignKey) *campaignFigures {
		f := by[k]
		if f == nil {
			f = &campaignFigures{revenue: map[string]int64{}}
			by[k] = f
		}
		return f
	}
	for _, c := range counts {
		f := get(campaignKey{c.Source, c.Medium, c.Campaign.Campaign})
		f.joined += c.Joined
		f.admitted += c.Admitted
	}
	for _, sale := range sales {
		f := get(countedKey(sale.Source, sale.Medium, sale.Campaign))
		f.orders += sale.Orders
		f.buyers += sale.Buyers
		f.units += sale.Units
		for cur, amount := range sale.Revenue {
			f.revenue[cur] += amount
		}
	}
	for k, n := range clicks {
		get(countedKey(k.source, k.medium, k.campaign)).clicks += n
	}
	keys := slices.Collect(maps.Keys(by))
	sort.Slice(keys, func(i, j int) bool {
		a, b := by[keys[i]], by[keys[j]]
		if a.joined != b.joined {
			return a.joined > b.joined
		}
		if a.orders != b.orders {
			return a.orders > b.orders
		}
		ki, kj := keys[i], keys[j]
		if ki.source != kj.source {
			return ki.source < kj.source
		}
		if ki.medium != kj.medium {
			return ki.medium < kj.medium
		}
		return ki.campaign < kj.campaign
	})
	total := campaignFigures{revenue: map[string]int64{}}
	lines := make([]views.AttributionLine, 0, len(keys))
	for _, k := range keys {
		f := by[k]
		l := figuresLine(*f, lang)
		l.Source, l.Medium, l.Campaign = k.source, k.medium, k.campaign
		l.Direct = k == campaignKey{}
		lines = append(lines, l)
		total.joined += f.joined
		total.admitted += f.admitted
		total.orders += f.orders
		total.buyers += f.buyers
		total.units += f.units
		total.clicks += f.clicks
		for cur, amount := range f.revenue {
			total.revenue[cur] += amount
		}
	}
	return lines, figuresLine(total, lang)
}

// figuresLine formats f. The total's buyers add up the campaigns' (a
// visitor who bought through two campaigns counts in each).
func figuresLine(f campaignFigures, lang string) views.AttributionLine {
	l := views.AttributionLine{Joined: f.joined, Admitted: f.admitted, Orders: f.orders, Buyers: f.buyers, Units: f.units, Clicks: f.clicks,
		Conversion: sharePercent(f.buyers, f.joined), AdmittedOrdered: sharePercent(f.buyers, f.admitted)}
	for _, cur := range slices.Sorted(maps.Keys(f.revenue)) {
		l.Revenue = append(l.Revenue, views.FormatPrice(f.revenue[cur], cur, lang))
	}
	return l
}

// sharePercent writes part/whole as a percentage with one decimal ("12.5%"),
// "" when whole is 0.
func sharePercent(part, whole int64) string {
	if whole <= 0 {
		return ""
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

// linkClicks adds up the clicks of room name's share links per campaign
// (share). It reports false when there are no share links to count, or
// they could not be read (the page shows no clicks then).
func (s *Console) linkClicks(ctx context.Context, name string) (map[campaignKey]int64, bool) {
	if s.shares == nil {
		return nil, false
	}
	ls, err := s.shares.List(ctx, name)
	if err != nil {
		s.log.Warn("console: attribution: share links", "room", name, "err", err)
		return nil, false
	}
	out := map[campaignKey]int64{}
	for _, l := range ls {
		out[campaignKey{l.Source, l.Medium, l.Campaign}] += l.Clicks
	}
	return out, len(ls) > 0
}
