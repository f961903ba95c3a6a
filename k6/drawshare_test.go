package k6

import (
	"strings"
	"testing"
)

// TestDrawShareCheck: a draw passes when it holds every place told of and
// no more than the joins cut short by the opening besides.
func TestDrawShareCheck(t *testing.T) {
	tests := []struct {
		name string
		r    DrawShareReport
		err  string
	}{
		{"every place, nothing else", DrawShareReport{CrowdJoined: 10, Bot: PowBotReport{Placed: 90}, Drawn: 100}, ""},
		{"two cut short", DrawShareReport{CrowdJoined: 10, Bot: PowBotReport{Placed: 90}, Drawn: 102, CutShort: 8}, ""},
		{"more than were cut short", DrawShareReport{CrowdJoined: 10, Bot: PowBotReport{Placed: 90}, Drawn: 109, CutShort: 8}, "109 places drawn"},
		{"a place left out", DrawShareReport{CrowdJoined: 10, Bot: PowBotReport{Placed: 90}, Drawn: 100, Missing: 1}, "1 of the crowd's and the bot's places"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.r.Check()
			if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("error %v, want %q", err, tt.err)
			}
		})
	}
	r := DrawShareReport{Drawn: 200, BotDrawn: 150, Top: 100, BotTop: 70}
	if r.JoinShare() != 0.75 || r.TopShare() != 0.7 {
		t.Fatalf("shares %v, %v", r.JoinShare(), r.TopShare())
	}
}
