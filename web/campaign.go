package web

import (
	"log/slog"
	"net/url"
	"waitingroom/web/request"

	"waitingroom/server/order"
	"waitingroom/server/queue"
)

// campaignOf returns the campaign named by v's utm_source, utm_medium and
// utm_campaign. Attribution never decides who gets in line: when one of
// the values is not a valid UTM value (the order path's rule, request.ValidUTM:
// too long, not UTF-8, control or bidirectional formatting characters) the
// join counts under queue.OtherCampaign, and the buyer joins all the same.
func (s *Server) campaignOf(v url.Values) queue.Campaign {
	c := queue.Campaign{Source: v.Get("utm_source"), Medium: v.Get("utm_medium"), Campaign: v.Get("utm_campaign")}
	if request.ValidUTM(order.UTM{Source: c.Source, Medium: c.Medium, Campaign: c.Campaign}) {
		return c
	}
	if s.log != nil {
		// The values themselves stay out of the log: they are not valid text.
		s.log.Debug("join with UTM values that are not valid: counted as (other)",
			slog.Int("source_bytes", len(c.Source)), slog.Int("medium_bytes", len(c.Medium)),
			slog.Int("campaign_bytes", len(c.Campaign)))
	}
	return queue.OtherCampaign
}
