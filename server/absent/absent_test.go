package absent_test

import (
	"fmt"
	"testing"
	"time"

	"waitingroom/server/absent"
)

func TestSet(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, tc := range []struct {
		name    string
		add     []string
		at      time.Duration
		key     string
		want    bool
		wantLen int
	}{
		{"added", []string{"a"}, time.Second, "a", true, 1},
		{"not added", []string{"a"}, time.Second, "b", false, 1},
		{"expired", []string{"a"}, 30 * time.Second, "a", false, 0},
		{"bounded", []string{"a", "b", "c", "d", "e"}, time.Second, "e", true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := absent.New(30*time.Second, 3)
			for _, k := range tc.add {
				s.Add(k, t0)
			}
			if got := s.Has(tc.key, t0.Add(tc.at)); got != tc.want {
				t.Errorf("Has(%q) = %v, want %v", tc.key, got, tc.want)
			}
			if got := s.Len(); got != tc.wantLen {
				t.Errorf("Len = %d, want %d", got, tc.wantLen)
			}
		})
	}
	s := absent.New(time.Second, 2)
	for i := range 1000 {
		s.Add(fmt.Sprint(i), t0)
	}
	if s.Len() != 2 {
		t.Fatalf("Len %d after 1000 adds, want 2", s.Len())
	}
}
