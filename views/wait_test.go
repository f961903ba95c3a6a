package views

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// TestWaitTextInBothLanguages: every text of the wait page has words in
// Korean and English, and they differ.
func TestWaitTextInBothLanguages(t *testing.T) {
	en, ko := reflect.ValueOf(WaitTextFor("en")), reflect.ValueOf(WaitTextFor("ko"))
	for i := range en.NumField() {
		name := en.Type().Field(i).Name
		if e, k := en.Field(i).String(), ko.Field(i).String(); e == "" || k == "" || e == k {
			t.Errorf("%s: en %q, ko %q", name, e, k)
		}
	}
}

// TestWaitPage: while the wait lasts the page says the seconds left and
// refreshes itself to its own address (at most every MaxWaitRefresh
// seconds), with a link for a browser that does not; once due it offers
// the join form with the token and the utm fields, and no refresh.
func TestWaitPage(t *testing.T) {
	utm := []Field{{Name: "utm_source", Value: "news&more"}}
	for _, tc := range []struct {
		name string
		page WaitPage
		want []string
		not  []string
	}{
		{"waiting", WaitPage{Room: "drop", Left: 5, Token: "w1.drop.N.1.2.mac", UTM: utm},
			[]string{`content="5;url=/r/drop/wait?utm_source=news%26more&amp;w=w1.drop.N.1.2.mac"`, "Please wait 5", `id="wr-again"`},
			[]string{`name="wait"`, `<form`}},
		{"a long wait refreshes now and then", WaitPage{Room: "drop", Left: 250, Token: "t"},
			[]string{`content="30;url=/r/drop/wait?w=t"`, "Please wait 4"}, nil},
		{"due", WaitPage{Room: "drop", Left: 0, Within: 120, Token: "w1.drop.N.1.2.mac", UTM: utm},
			[]string{`action="/r/drop/join?utm_source=news%26more"`, `<input type="hidden" name="wait" value="w1.drop.N.1.2.mac">`, "You can join the line now.", "Join the line"},
			[]string{`http-equiv="refresh"`, `id="wr-again"`}},
	} {
		tc.page.T, tc.page.W, tc.page.Title = For("en"), WaitTextFor("en"), "Drop"
		var b strings.Builder
		if err := Wait(tc.page).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: the page lacks %s\n%s", tc.name, w, b.String())
			}
		}
		for _, n := range tc.not {
			if strings.Contains(b.String(), n) {
				t.Errorf("%s: the page has %s", tc.name, n)
			}
		}
	}
}
