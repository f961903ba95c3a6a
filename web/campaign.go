package web

import (
	"net/url"

	"waitingroom/server/order"
	"waitingroom/server/queue"
)

// campaignOf returns the campaign named by v's utm_source, utm_medium and
// utm_campaign, and false when one of them is not a valid UTM value (the
// order path's rule, validUTM).
func campaignOf(v url.Values) (queue.Campaign, bool) {
	c := queue.Campaign{Source: v.Get("utm_source"), Medium: v.Get("utm_medium"), Campaign: v.Get("utm_campaign")}
	return c, validUTM(order.UTM{Source: c.Source, Medium: c.Medium, Campaign: c.Campaign})
}

// badCampaign is the JSON error of an enter whose UTM values are not valid.
const badCampaign = "UTM values are at most 200 bytes each, of valid UTF-8 without control or bidirectional formatting characters."
