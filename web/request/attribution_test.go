package request

import (
	"net/url"
	"strings"
	"testing"

	"waitingroom/server/order"
)

func TestValidAttribution(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		k, v string
		want bool
	}{
		{"gclid", "Cj0KCQiA-abc_DEF.123~x", true},
		{"fbclid", "IwAR2F4-dbP0l7Mn1IawQQGCINEz7PYXQvwjNwB_qa2ofrHyiLjcbCRxTDMgE", true},
		{"ttclid", "E.C.P.CqgBqT1+a/b==", true},
		{"gclid", strings.Repeat("a", maxClickID), true},
		{"gclid", strings.Repeat("a", maxClickID+1), false},
		{"fbclid", "a b", false},
		{"ttclid", "<script>", false},
		{"gclid", "봄", false},
		{"utm_content", "봄 배너", true},
		{"utm_term", "a\x00b", false},
		{"utm_content", strings.Repeat("x", MaxUTM+1), false},
	} {
		if got := ValidAttribution(tc.k, tc.v); got != tc.want {
			t.Errorf("ValidAttribution(%q, %.20q) = %v", tc.k, tc.v, got)
		}
	}
	u := AttributionOf(url.Values{"utm_source": {"s"}, "utm_content": {"c"}, "gclid": {"g1"}, "fbclid": {"bad id"}, "ttclid": {"t1"}, "other": {"x"}})
	if want := (order.UTM{Source: "s", Content: "c", Gclid: "g1", Ttclid: "t1"}); u != want {
		t.Fatalf("AttributionOf: %+v, want %+v", u, want)
	}
}
