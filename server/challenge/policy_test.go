package challenge

import "testing"

func TestPolicyMaxNumber(t *testing.T) {
	p := DefaultPolicy()
	tests := []struct {
		name              string
		netRate, roomRate float64
		mode              string
		want              int64
	}{
		{"off asks nothing", 500, 5000, "off", 0},
		{"unset is off", 500, 5000, "", 0},
		{"unknown is off", 500, 5000, "sometimes", 0},
		{"a lone buyer pays M0", 0.1, 1, "auto", 20_000},
		{"at the network's free rate", 10, 1, "auto", 20_000},
		{"twice the network's free rate pays twice", 20, 1, "auto", 40_000},
		{"hundreds of joins a second pay 30×", 300, 1, "auto", 600_000},
		{"a busy room doubles everyone's cost", 1, 1000, "auto", 40_000},
		{"the room's factor stops at 4", 1, 100_000, "auto", 80_000},
		{"both multiply", 100, 1000, "auto", 400_000},
		{"capped at Max", 1e6, 1e6, "auto", 10_000_000},
		{"always has its floor", 0.1, 1, "always", 200_000},
		{"always rises above its floor like auto", 200, 1, "always", 400_000},
		{"negative rates are none", -5, -5, "auto", 20_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := p.MaxNumber(tc.netRate, tc.roomRate, tc.mode); got != tc.want {
				t.Errorf("MaxNumber(%g, %g, %q) = %d, want %d", tc.netRate, tc.roomRate, tc.mode, got, tc.want)
			}
		})
	}
}

func TestPolicyExponent(t *testing.T) {
	p := DefaultPolicy()
	p.K = 2
	if got, want := p.MaxNumber(30, 0, "auto"), int64(180_000); got != want { // (30/10)^2 = 9
		t.Errorf("K=2 at 3× the free rate: %d, want %d", got, want)
	}
	p.Max = 1000 // below M0: the floor wins
	if got, want := p.MaxNumber(30, 0, "auto"), int64(20_000); got != want {
		t.Errorf("Max below M0: %d, want %d", got, want)
	}
}
