package queue

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Campaign is where a visitor came from: the utm_source, utm_medium and
// utm_campaign of the link they joined by. The zero Campaign is direct.
// The web layer bounds and validates each value (plaintext, ≤ 200 bytes).
type Campaign struct {
	Source, Medium, Campaign string
}

// MaxCampaigns bounds the distinct campaigns a room counts apart; joins
// from further campaigns count under OtherCampaign, so that made-up links
// cannot grow Redis without bound.
const MaxCampaigns = 1000

// MaxCampaignsPerSource bounds the distinct campaigns of one utm_source.
//
// Why: a campaign is counted apart only when its source and medium look
// like a real link's (see Counted) and while its source has fewer than
// this many campaigns, so that a thousand throwaway joins with made-up
// UTM values, before a sale, cannot use up MaxCampaigns and leave the
// sale's real campaigns under (other). Made-up values can still fill one
// source's share, but not the others'.
const MaxCampaignsPerSource = 100

// OtherCampaign is the campaign under which joins beyond MaxCampaigns
// distinct campaigns (or MaxCampaignsPerSource of one source) are counted,
// and joins whose source or medium is not a short token.
var OtherCampaign = Campaign{Source: "(other)"}

// otherKey is the key of OtherCampaign in a room's camps hash (see
// lib.lua); a real campaign's key always holds two separators.
const otherKey = "(other)"

// campaignSep separates a campaign's values in its key: a control
// character, which no valid value holds.
const campaignSep = "\x1f"

// Direct reports whether c carries no attribution at all.
func (c Campaign) Direct() bool { return c == Campaign{} }

// Label names c for people: "direct", "(other)" or "source / medium /
// campaign".
func (c Campaign) Label() string {
	if c.Direct() {
		return "direct"
	}
	return c.Source + " / " + c.Medium + " / " + c.Campaign
}

// isToken reports whether s is a short token: 1 to 64 of a-z, 0-9, '.',
// '_' and '-' (s is lower case already).
func isToken(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !('a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '.' || b == '_' || b == '-') {
			return false
		}
	}
	return true
}

// CountedValue returns v in lower case and whether it is a short token
// (isToken): the utm_source, and a utm_medium that is not empty, of a
// campaign that Counted does not count as OtherCampaign.
func CountedValue(v string) (string, bool) {
	l := strings.ToLower(v)
	return l, isToken(l)
}

// Counted is the campaign a join from c counts under: c with its source
// and medium in lower case, when the source is a short token and the
// medium is empty or one; else OtherCampaign (see MaxCampaignsPerSource
// for why). The campaign's own name is kept as given. The console folds
// orders and link clicks by the same rule, and the share-link builder
// refuses sources and media that it would count as OtherCampaign.
func (c Campaign) Counted() Campaign {
	if c.Direct() || c == OtherCampaign {
		return c
	}
	s, sok := CountedValue(c.Source)
	m, mok := CountedValue(c.Medium)
	if !sok || (m != "" && !mok) {
		return OtherCampaign
	}
	return Campaign{Source: s, Medium: m, Campaign: c.Campaign}
}

func (c Campaign) key() string {
	if c.Direct() {
		return ""
	}
	if c == OtherCampaign {
		return otherKey
	}
	return c.Source + campaignSep + c.Medium + campaignSep + c.Campaign
}

func campaignOfKey(k string) Campaign {
	if k == otherKey {
		return OtherCampaign
	}
	s, rest, _ := strings.Cut(k, campaignSep)
	m, c, _ := strings.Cut(rest, campaignSep)
	return Campaign{Source: s, Medium: m, Campaign: c}
}

// CampaignCount is how many visitors of one campaign joined a room's line
// (a new ticket each; a repeated enter keeps its ticket and counts once)
// and how many of them were admitted.
type CampaignCount struct {
	Campaign
	Joined, Admitted int64
}

// Attribution returns room's joins and admissions per campaign, the most
// joins first. The direct visitors are the zero Campaign. An unknown (or
// deleted) room has none.
func (e *Engine) Attribution(ctx context.Context, roomName string) ([]CampaignCount, error) {
	k := roomKeys(e.ns, roomName)
	pipe := e.rdb.Pipeline()
	campsCmd := pipe.HGetAll(ctx, k.key("camps"))
	attrCmd := pipe.HGetAll(ctx, k.key("attr"))
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("queue: attribution %s: %w", roomName, err)
	}
	byID := map[string]*CampaignCount{}
	for key, id := range campsCmd.Val() {
		byID[id] = &CampaignCount{Campaign: campaignOfKey(key)}
	}
	for f, v := range attrCmd.Val() {
		if len(f) < 2 || (f[0] != 'j' && f[0] != 'a') {
			continue // "next", the id counter
		}
		id := f[1:]
		c, ok := byID[id]
		if !ok {
			if id != "0" {
				continue
			}
			c = &CampaignCount{}
			byID[id] = c
		}
		if f[0] == 'j' {
			c.Joined = asInt(v)
		} else {
			c.Admitted = asInt(v)
		}
	}
	out := make([]CampaignCount, 0, len(byID))
	for _, c := range byID {
		if c.Joined > 0 || c.Admitted > 0 {
			out = append(out, *c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Joined != out[j].Joined {
			return out[i].Joined > out[j].Joined
		}
		return out[i].Label() < out[j].Label()
	})
	return out, nil
}
