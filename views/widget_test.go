package views

import (
	"bytes"
	"context"
	"regexp"
	"testing"
)

// TestWidgetSoldOutOffersNoButton: sold out, the widget says so in the
// visitor's language and its button is hidden (widget.js keeps it so as
// the state changes); before, the button is offered.
func TestWidgetSoldOutOffersNoButton(t *testing.T) {
	button := regexp.MustCompile(`<a id="wr-w-go"[^>]*>`)
	for _, tc := range []struct {
		lang, target, state string
		soldOut             bool
	}{
		{"en", "_blank", "Sold out", true},
		{"ko", "_blank", "품절", true},
		{"en", "_top", "Sold out", true},
		{"ko", "_top", "품절", true},
		{"en", "_blank", "Open now", false},
		{"ko", "_top", "지금 입장할 수 있습니다", false},
	} {
		t.Run(tc.lang+" "+tc.target+" "+tc.state, func(t *testing.T) {
			var b bytes.Buffer
			p := WidgetPage{Room: "drop", Title: "Spring drop", T: For(tc.lang), State: tc.state, Link: "/r/drop", Target: tc.target, SoldOut: tc.soldOut}
			if err := Widget(p).Render(context.Background(), &b); err != nil {
				t.Fatal(err)
			}
			a := button.FindString(b.String())
			if a == "" || !bytes.Contains(b.Bytes(), []byte(`data-sold-out="`+For(tc.lang).SoldOutTitle+`"`)) {
				t.Fatalf("no button or no sold-out words:\n%s", b.String())
			}
			if hidden := regexp.MustCompile(`\shidden[\s>]`).MatchString(a); hidden != tc.soldOut {
				t.Fatalf("button %s: hidden %v, want %v", a, hidden, tc.soldOut)
			}
		})
	}
}
