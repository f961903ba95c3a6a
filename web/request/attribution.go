package request

import (
	"net/url"

	"waitingroom/server/order"
	"waitingroom/server/plaintext"
)

// The attribution a buyer carries from the link they came by to their
// order: the five UTM values and the ad click ids of Google (gclid), Meta
// (fbclid) and TikTok (ttclid). Per-campaign counts in the line stay by
// utm_source, utm_medium and utm_campaign (campaignOf).

// MaxUTM bounds each UTM value, in bytes.
const MaxUTM = 200

// maxClickID bounds each ad click id, in bytes.
const maxClickID = 512

// UTMFields are the query and form fields that carry attribution, in the
// order pages and forms carry them.
var UTMFields = []string{"utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content", "gclid", "fbclid", "ttclid"}

// ValidAttribution reports whether v may be field k's value: a UTM value
// is at most MaxUTM bytes of plain text (plaintext.Valid); a click id is
// at most maxClickID bytes of the URL-safe and base64 alphabets.
func ValidAttribution(k, v string) bool {
	switch k {
	case "gclid", "fbclid", "ttclid":
		if len(v) > maxClickID {
			return false
		}
		for _, c := range []byte(v) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
				c == '-' || c == '_' || c == '.' || c == '~' || c == '+' || c == '/' || c == '=') {
				return false
			}
		}
		return true
	}
	return len(v) <= MaxUTM && plaintext.Valid(v)
}

// attributionField is one attribution field of an order.UTM: its name
// (one of UTMFields) and where it is kept.
type attributionField struct {
	name string
	v    *string
}

// attributionFields returns u's fields, in UTMFields order.
func attributionFields(u *order.UTM) []attributionField {
	return []attributionField{{"utm_source", &u.Source}, {"utm_medium", &u.Medium}, {"utm_campaign", &u.Campaign},
		{"utm_term", &u.Term}, {"utm_content", &u.Content}, {"gclid", &u.Gclid}, {"fbclid", &u.Fbclid}, {"ttclid", &u.Ttclid}}
}

// AttributionValues returns u's fields by their names, in UTMFields order.
func AttributionValues(u order.UTM) [][2]string {
	fs := attributionFields(&u)
	out := make([][2]string, len(fs))
	for i, f := range fs {
		out[i] = [2]string{f.name, *f.v}
	}
	return out
}

// SetAttribution sets u's field named k (one of UTMFields) to v.
func SetAttribution(u *order.UTM, k, v string) {
	for _, f := range attributionFields(u) {
		if f.name == k {
			*f.v = v
			return
		}
	}
}

// AttributionOf returns the valid attribution fields of v; the others
// are dropped, never a reason to refuse anything.
func AttributionOf(v url.Values) order.UTM {
	var u order.UTM
	for _, k := range UTMFields {
		if s := v.Get(k); s != "" && ValidAttribution(k, s) {
			SetAttribution(&u, k, s)
		}
	}
	return u
}

// ValidUTM reports whether every field of u is valid (ValidAttribution).
func ValidUTM(u order.UTM) bool {
	for _, kv := range AttributionValues(u) {
		if !ValidAttribution(kv[0], kv[1]) {
			return false
		}
	}
	return true
}
