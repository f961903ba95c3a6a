package views

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/a-h/templ"
)

func render(t *testing.T, c templ.Component) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func ptr(v int64) *int64 { return &v }

// TestStatusPageStates renders the no-JS status page in every state,
// including those the schedule and the absence bring (pre-queue, not yet
// open, ended, paused, a pass with its time left, a rank that went up):
// each has its own words, no estimate where none is honest, and "keep
// this page open" only where it is true.
func TestStatusPageStates(t *testing.T) {
	base := StatusPage{Room: "r", Title: "Sale", Refresh: 3, Products: []Product{{ID: 1, Name: "Shoe", Price: 129000, Currency: "KRW", Max: 2}}}
	tests := []struct {
		name    string
		lang    string
		mut     func(*StatusPage)
		wants   []string
		not     []string
		refresh bool
	}{
		{"scheduled", "en", func(p *StatusPage) { p.Status, p.Phase, p.OpensIn = "NOT_ENTERED", "scheduled", ptr(3725) },
			[]string{"Not open yet", "Opens in about 1 h 2 min"}, []string{">Join the line<", "Keep this page open"}, true},
		{"pre-queue", "en", func(p *StatusPage) { p.Status, p.Phase, p.OpensIn, p.Ticket = "PREQUEUED", "prequeue", ptr(90), 17 },
			[]string{"You are in the pre-queue", "random place", "Places are drawn in about 1 min 30 s", "Your ticket number: 17", "Keep this page open"},
			[]string{"ahead of you", "Estimated wait"}, true},
		{"pre-queue (ko)", "ko", func(p *StatusPage) { p.Status, p.Phase, p.OpensIn = "PREQUEUED", "prequeue", ptr(90) },
			[]string{"사전 대기열에 들어오셨습니다", "무작위로"}, []string{"내 앞에"}, true},
		{"waiting", "en", func(p *StatusPage) { p.Status, p.Rank, p.ETA, p.Waiting = "WAITING", 4, ptr(8), 9 },
			[]string{"4 people ahead of you", "Estimated wait: 8 s", "9 in line", "Keep this page open"}, nil, true},
		{"waiting without an estimate", "en", func(p *StatusPage) { p.Status, p.Rank = "WAITING", 4 },
			[]string{"4 people ahead of you"}, []string{"Estimated wait"}, true},
		{"rank went up", "en", func(p *StatusPage) { p.Status, p.Rank, p.RankUpReason = "WAITING", 5, "returned" },
			[]string{"joined it again at the end"}, nil, true},
		{"paused", "en", func(p *StatusPage) { p.Status, p.Rank, p.Paused, p.ETA = "WAITING", 4, true, ptr(8) },
			[]string{"The line is paused", "cannot estimate", "4 people ahead of you"}, []string{"Estimated wait"}, true},
		{"paused (ko)", "ko", func(p *StatusPage) { p.Status, p.Rank, p.Paused = "WAITING", 1, true },
			[]string{"대기열이 잠시 멈췄습니다", "내 앞에 1명이 있습니다"}, nil, true},
		{"paused at the front", "en", func(p *StatusPage) { p.Status, p.Rank, p.Paused = "WAITING", 0, true },
			[]string{"Nobody is ahead of you"}, []string{"You are next"}, true},
		{"paused at the front (ko)", "ko", func(p *StatusPage) { p.Status, p.Rank, p.Paused = "WAITING", 0, true },
			[]string{"내 앞에 아무도 없습니다"}, []string{"곧 입장합니다"}, true},
		{"the draw is due", "en", func(p *StatusPage) { p.Status, p.Phase, p.OpensIn = "PREQUEUED", "prequeue", ptr(0) },
			[]string{"Drawing places now…"}, []string{"drawn in"}, true},
		// The pass's page refreshes at the pass's end, to say it ran out.
		{"ready", "en", func(p *StatusPage) {
			p.Status, p.Token, p.PassLeft, p.PassEndsAt, p.UTM = "READY", "tok", ptr(245), 1700000000000, []Field{{"utm_source", "mail"}}
		}, []string{"It is your turn!", "Your pass is valid for about 4 min 5 s", "Buy now", "₩129,000", `max="2"`,
			`http-equiv="refresh" content="246; url=/r/r/status?pass_over=1700000000000&amp;utm_source=mail"`},
			[]string{"Keep this page open"}, true},
		{"ready, a 30 s pass", "en", func(p *StatusPage) { p.T = p.T.WithPass(30); p.Status, p.Token, p.PassLeft = "READY", "tok", ptr(30) },
			[]string{"Your entry pass is valid for 30 s"}, []string{"a few minutes"}, true},
		{"ready, a 30 s pass (ko)", "ko", func(p *StatusPage) { p.T = p.T.WithPass(30); p.Status, p.Token, p.PassLeft = "READY", "tok", ptr(30) },
			[]string{"입장권은 30초 동안 유효합니다"}, []string{"몇 분"}, true},
		{"pass over", "en", func(p *StatusPage) { p.T = p.T.WithPass(30); p.Status, p.PassOver = "NOT_ENTERED", true },
			[]string{"Your pass has expired", "Passes are held for 30 s", ">Join the line again<"}, []string{"not in the line", "Keep this page open"}, false},
		{"pass over (ko)", "ko", func(p *StatusPage) { p.T = p.T.WithPass(300); p.Status, p.PassOver = "NOT_ENTERED", true },
			[]string{"입장권이 만료되었습니다", "입장권은 5분 동안만", ">다시 줄 서기<"}, nil, false},
		{"sold out", "en", func(p *StatusPage) { p.Status, p.SoldOut, p.ShopURL = "NOT_ENTERED", true, "https://shop.example" },
			[]string{"Sold out", "Back to the shop"}, []string{"Keep this page open", ">Join the line<"}, false},
		{"sold out, in line", "en", func(p *StatusPage) { p.Status, p.Rank, p.SoldOut = "WAITING", 4, true },
			[]string{"Sold out for now", "you keep your place"}, []string{"Everything has been sold", ">Join the line<"}, true},
		{"sold out, in line (ko)", "ko", func(p *StatusPage) { p.Status, p.Rank, p.SoldOut = "WAITING", 4, true },
			[]string{"지금은 품절입니다", "순서가 그대로 유지됩니다"}, []string{"기다려 주셔서 감사합니다"}, true},
		{"ended", "ko", func(p *StatusPage) { p.Status, p.Phase = "NOT_ENTERED", "closed" },
			[]string{"판매가 종료되었습니다"}, []string{"줄 서기", "열어 두시면"}, false},
		{"served after the close", "en", func(p *StatusPage) { p.Status, p.Phase, p.Rank = "WAITING", "closed", 2 },
			[]string{"2 people ahead of you"}, []string{"has ended"}, true},
		{"not in line", "en", func(p *StatusPage) {
			p.Status, p.UTM = "NOT_ENTERED", []Field{{"utm_source", "mail"}}
		}, []string{"You are not in the line.", `action="/r/r/join?utm_source=mail"`}, []string{"Keep this page open"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := base
			p.T = For(tt.lang)
			tt.mut(&p)
			html := render(t, Status(p))
			for _, w := range tt.wants {
				if !strings.Contains(html, w) {
					t.Errorf("lacks %q:\n%s", w, html)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(html, n) {
					t.Errorf("says %q:\n%s", n, html)
				}
			}
			if got := strings.Contains(html, `http-equiv="refresh"`); got != tt.refresh {
				t.Errorf("refreshes: %v, want %v", got, tt.refresh)
			}
			// One heading: the order form has none of its own.
			if strings.Count(html, "<h1") != 1 || strings.Contains(html, "<h2") {
				t.Errorf("headings doubled:\n%s", html)
			}
		})
	}
}
