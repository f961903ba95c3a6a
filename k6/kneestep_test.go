package k6

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// handlerTransport answers each request with h in the caller's goroutine:
// an in-memory network, on which a step runs on a bubble's simulated
// clock (the clock moves only when every goroutine waits, so the figures
// are the shop's arithmetic, whatever the machine's load).
type handlerTransport struct{ h http.Handler }

func (tr handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	tr.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

func serveInMemory(h http.Handler) (string, http.RoundTripper, func(), error) {
	return "http://knee-shop.test", handlerTransport{h}, func() {}, nil
}

// TestKneeSteps runs the steps on a simulated clock, past a knee shop's
// capacity: 4 workers of 100 ms (40/s), a 300 ms wait bound, 20, 40 and
// 60 orders a second, each step measured from 200 ms to 1 s. Under the
// knee every order sent in the window is measured and takes Work, and
// the answers in the window come at the rate sent; at 60/s the excess
// waits, some of it past the bound, so Knee finds the knee at 60/s and
// Recommend 32 of 40.
func TestKneeSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const work, maxWait = 100 * time.Millisecond, 300 * time.Millisecond
		steps, err := KneeSteps{Capacity: 40, Work: work, MaxWait: maxWait, Rates: RatesAround(40, 0.5, 1.5, 0.5),
			Warmup: 200 * time.Millisecond, Duration: 800 * time.Millisecond, serve: serveInMemory}.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("\n%s", FormatSteps(steps))
		want := []Step{
			{Target: 20, Actual: 20, P95: work, Orders: 16},
			{Target: 40, Actual: 40, P95: work, Orders: 32},
		}
		if len(steps) != 3 || !slices.Equal(steps[:2], want) {
			t.Fatalf("steps %+v, want the two under the knee %+v", steps, want)
		}
		// 60/s: 48 orders sent in the window, 9 of them waited past the
		// bound; 35 answers (32 served at the shop's 40/s, 3 refused) came
		// in the window; a served order waited at most the bound.
		if over := steps[2]; over.Orders != 48 || over.FailRate != 9.0/48 || over.Actual != 35/0.8 || over.P95 <= work || over.P95 > work+maxWait {
			t.Fatalf("the step past the knee: %+v", over)
		}
		if k := Knee(steps); k != 2 {
			t.Fatalf("knee at step %d, want 2 (60/s on a 40/s shop)", k)
		}
		if rate, lastGood, found := Recommend(steps, 0.2); !found || lastGood != 40 || rate != 32 {
			t.Fatalf("recommended %v (last good %v, found %t), want 32 of 40", rate, lastGood, found)
		}
	})
}

// TestKneeStepsRecorded reads the step table that KneeSteps measured on
// the knee shop at 60/s for BENCHMARKS.md (wrload adaptive -mode compare):
// the throughput stops at 60, so the knee is 72 and the pick 48.
func TestKneeStepsRecorded(t *testing.T) {
	recorded := []Step{
		{Target: 24, Actual: 24.0, P95: ms(1008)},
		{Target: 36, Actual: 36.0, P95: ms(1004)},
		{Target: 48, Actual: 48.0, P95: ms(1023)},
		{Target: 60, Actual: 60.0, P95: ms(1027)},
		{Target: 72, Actual: 60.0, P95: ms(2865)},
		{Target: 84, Actual: 60.0, P95: ms(4727)},
		{Target: 96, Actual: 60.0, P95: ms(5947), FailRate: 0.0794},
	}
	if k := Knee(recorded); k != 4 {
		t.Fatalf("knee at step %d, want 4 (72/s)", k)
	}
	if rate, lastGood, found := Recommend(recorded, 0.2); !found || lastGood != 60 || rate != 48 {
		t.Fatalf("recommended %v (last good %v, found %t), want 48 of 60", rate, lastGood, found)
	}
	if got := RatesAround(60, 0.4, 1.6, 0.2); !slices.Equal(got, []float64{24, 36, 48, 60, 72, 84, 96}) {
		t.Fatalf("RatesAround(60, 0.4, 1.6, 0.2) = %v, want the table's rates", got)
	}
}
