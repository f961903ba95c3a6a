package k6

import (
	"net/http"
	"testing"
	"time"
)

func TestSummarise(t *testing.T) {
	a := BurstReport{Elapsed: 3, Samples: []Sample{
		{Admitted: ms(100), Order: ms(10), Status: 201},
		{Admitted: ms(300), Order: ms(30), Status: 201},
		{Admitted: ms(200), Order: ms(20), Status: 409},
	}}
	b := BurstReport{Elapsed: 5, Samples: []Sample{
		{}, // never admitted
		{Status: http.StatusGone},
		{Admitted: ms(400), Order: ms(40), Status: 201},
	}}
	s := Summarise(a, b)
	if s.Buyers != 6 || s.Admitted != 4 || s.Ordered != 3 || s.NeverAdmitted != 1 || s.Elapsed != 5 {
		t.Fatalf("counts %+v", s)
	}
	if s.AdmissionP50 != ms(200) || s.AdmissionMax != ms(400) || s.OrderP95 != ms(40) || s.OrderP50 != ms(20) {
		t.Fatalf("percentiles %+v", s)
	}
	if s.Status[201] != 3 || s.Status[409] != 1 || s.Status[0] != 1 || s.Status[http.StatusGone] != 1 {
		t.Fatalf("status mix %v", s.Status)
	}
}

func TestTimeline(t *testing.T) {
	start := time.UnixMilli(1_000_000)
	rep := BurstReport{Samples: []Sample{
		{Order: ms(10), Done: 1_000_500, Status: 201},
		{Order: ms(30), Done: 1_000_900, Status: 201},
		{Order: ms(50), Done: 1_002_100, Status: 201},
	}}
	tl := Timeline(start, []BurstReport{rep}, []float64{0, 40, 80, 120}, []float64{1, 2, 3, 4})
	if len(tl) != 4 {
		t.Fatalf("%d seconds, want 4", len(tl))
	}
	want := []struct {
		orders   int
		p95      time.Duration
		admitted float64
	}{{2, ms(30), 0}, {0, 0, 40}, {1, ms(50), 40}, {0, 0, 40}}
	for i, w := range want {
		if tl[i].Orders != w.orders || tl[i].OrderP95 != w.p95 || tl[i].Admitted != w.admitted {
			t.Errorf("second %d: %+v, want %+v", i, tl[i], w)
		}
	}
}

func TestMergeReports(t *testing.T) {
	c1 := Report{Mode: "sse", Connected: 2, Events: 10, Lost: 1, Lat: map[int64][]int32{5: {1000, 2000}}, Headers: []int32{100}}
	c2 := Report{Mode: "sse", Connected: 3, Events: 20, Duplicates: 2, Lat: map[int64][]int32{5: {3000}, 6: {9000}}, Headers: []int32{200, 300}}
	m := MergeReports(Report{RSSBefore: 1000, RSSAfter: 6000}, []Report{c1, c2})
	if m.Connected != 5 || m.Events != 30 || m.Lost != 1 || m.Duplicates != 2 || m.Ticks != 2 || m.RSSPerConn != 1000 {
		t.Fatalf("merged %+v", m)
	}
	if m.LatencyMax != 9*time.Millisecond || m.LatencyP50 != 2*time.Millisecond || m.WorstTickP99 != 9*time.Millisecond || m.HeadersP50 != 200*time.Microsecond {
		t.Fatalf("merged latencies %+v", m)
	}
}
