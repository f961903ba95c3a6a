package k6

import (
	"context"
	"testing"
	"time"
)

// TestKneeSteps: stepped past a knee shop's capacity, calibrate's Knee
// finds the knee in the table and Recommend a rate under the capacity.
func TestKneeSteps(t *testing.T) {
	steps, err := KneeSteps{Capacity: 40, Work: 100 * time.Millisecond, MaxWait: 300 * time.Millisecond,
		Rates: RatesAround(40, 0.5, 1.5, 0.5), Warmup: 200 * time.Millisecond, Duration: 800 * time.Millisecond}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", FormatSteps(steps))
	if k := Knee(steps); k != 2 {
		t.Fatalf("knee at step %d, want 2 (60/s on a 40/s shop)", k)
	}
	if rate, lastGood, found := Recommend(steps, 0.2); !found || lastGood != 40 || rate != 32 {
		t.Fatalf("recommended %v (last good %v, found %t), want 32 of 40", rate, lastGood, found)
	}
}
