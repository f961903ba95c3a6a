package k6

import (
	"net/url"
	"strings"
	"testing"
)

func TestParseHandOff(t *testing.T) {
	base, _ := url.Parse("http://queue.example/r/sale/pass")
	tests := []struct {
		name, page string
		want       HandOff
		err        string
	}{
		{"the hand-off", `<form method="post" action="https://shop.example/_waitingroom/enter"><input type="hidden" name="pass" value="eyJ.a.b">` +
			`<input type=hidden name=next value="/checkout?x=1&amp;y=2"><button>Continue</button></form>`,
			HandOff{Action: "https://shop.example/_waitingroom/enter", Pass: "eyJ.a.b", Next: "/checkout?x=1&y=2"}, ""},
		{"attributes in any order, another form first", `<form action="/lang"><input name="lang" value="ko"></form>` +
			"<FORM\n action='https://shop.example/_waitingroom/enter' method=post><input value='p.q.r' name='pass'></FORM>",
			HandOff{Action: "https://shop.example/_waitingroom/enter", Pass: "p.q.r"}, ""},
		{"a relative action", `<form action="/_waitingroom/enter"><input name="pass" value="x.y.z"></form>`,
			HandOff{Action: "http://queue.example/_waitingroom/enter", Pass: "x.y.z"}, ""},
		{"no pass value", `<form action="/x"><input name="pass" value=""></form>`, HandOff{}, "no pass"},
		{"an error page", `<p>This pass was already used.</p>`, HandOff{}, "no hand-off form"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHandOff(tt.page, base)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
