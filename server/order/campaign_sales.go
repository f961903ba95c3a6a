package order

import (
	"context"
	"fmt"
	"sort"
)

// CampaignSale is what one campaign (utm_source, utm_medium, utm_campaign;
// all "" for orders without UTM) sold in a room: placed orders only.
type CampaignSale struct {
	Source, Medium, Campaign string
	// Orders counts the orders, Buyers the distinct visitors who placed
	// them, Units their quantities.
	Orders, Buyers, Units int64
	// Revenue is the sum of quantity × unit price per currency, in each
	// currency's smallest unit, by currency code (orders placed before
	// prices were kept are left out).
	Revenue map[string]int64
}

// campaignSales returns room's placed orders per campaign.
func (s *Store) campaignSales(ctx context.Context, room string) ([]CampaignSale, error) {
	var counts []struct {
		Source   string `db:"source"`
		Medium   string `db:"medium"`
		Campaign string `db:"campaign"`
		Orders   int64  `db:"orders"`
		Buyers   int64  `db:"buyers"`
		Units    int64  `db:"units"`
	}
	const key = `COALESCE(utm_source, '') AS source, COALESCE(utm_medium, '') AS medium, COALESCE(utm_campaign, '') AS campaign`
	const group = `COALESCE(utm_source, ''), COALESCE(utm_medium, ''), COALESCE(utm_campaign, '')`
	err := s.db.SelectContext(ctx, &counts, s.db.Rebind(`SELECT `+key+`, COUNT(*) AS orders,
		COUNT(DISTINCT visitor) AS buyers, COALESCE(SUM(quantity), 0) AS units
		FROM orders WHERE room = ? AND status = ? GROUP BY `+group), room, StatusPlaced)
	if err != nil {
		return nil, fmt.Errorf("order: campaign sales of %s: %w", room, err)
	}
	var revenue []struct {
		Source   string `db:"source"`
		Medium   string `db:"medium"`
		Campaign string `db:"campaign"`
		Currency string `db:"currency"`
		Amount   int64  `db:"amount"`
	}
	err = s.db.SelectContext(ctx, &revenue, s.db.Rebind(`SELECT `+key+`, currency, SUM(quantity * unit_price) AS amount
		FROM orders WHERE room = ? AND status = ? AND unit_price IS NOT NULL AND currency IS NOT NULL
		GROUP BY `+group+`, currency`), room, StatusPlaced)
	if err != nil {
		return nil, fmt.Errorf("order: campaign revenue of %s: %w", room, err)
	}
	type k struct{ s, m, c string }
	at := map[k]int{}
	sales := make([]CampaignSale, 0, len(counts))
	for _, c := range counts {
		at[k{c.Source, c.Medium, c.Campaign}] = len(sales)
		sales = append(sales, CampaignSale{Source: c.Source, Medium: c.Medium, Campaign: c.Campaign,
			Orders: c.Orders, Buyers: c.Buyers, Units: c.Units, Revenue: map[string]int64{}})
	}
	for _, r := range revenue {
		if i, ok := at[k{r.Source, r.Medium, r.Campaign}]; ok {
			sales[i].Revenue[r.Currency] += r.Amount
		}
	}
	sort.Slice(sales, func(i, j int) bool {
		a, b := sales[i], sales[j]
		if a.Orders != b.Orders {
			return a.Orders > b.Orders
		}
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Medium != b.Medium {
			return a.Medium < b.Medium
		}
		return a.Campaign < b.Campaign
	})
	return sales, nil
}

// CampaignSales returns what each campaign sold in room (placed orders
// only), most orders first. It returns ErrUnavailable when the database
// does not answer.
func (s *Service) CampaignSales(ctx context.Context, roomName string) ([]CampaignSale, error) {
	sales, err := s.store.campaignSales(ctx, roomName)
	if err != nil {
		s.log.Warn("order: campaign sales", "room", roomName, "err", err)
		return nil, ErrUnavailable
	}
	return sales, nil
}
