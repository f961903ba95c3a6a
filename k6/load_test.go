package k6

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 50, 0},
		{ms(7), 99, 7 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 50, 5 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 90, 9 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 100, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := Percentile(tt.in, tt.p); got != tt.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tt.in, tt.p, got, tt.want)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		l    Load
		ok   bool
	}{
		{"loopback", Load{URL: "http://127.0.0.1:1/x", Concurrency: 1, Duration: time.Second}, true},
		{"localhost", Load{URL: "http://localhost:1/x", Concurrency: 1, Duration: time.Second}, true},
		{"private range", Load{URL: "http://10.0.0.1/x", Concurrency: 1, Duration: time.Second}, false},
		{"no duration", Load{URL: "http://127.0.0.1:1/x", Concurrency: 1}, false},
		{"no workers", Load{URL: "http://127.0.0.1:1/x", Duration: time.Second}, false},
		{"bad scheme", Load{URL: "ftp://127.0.0.1/x", Concurrency: 1, Duration: time.Second}, false},
	}
	for _, tt := range tests {
		if err := tt.l.Validate(); (err == nil) != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

func TestRunIsBoundedByRequestCap(t *testing.T) {
	srv := httptest.NewServer(HelloHandler())
	defer srv.Close()
	res, err := Load{URL: srv.URL, Method: http.MethodPost, Concurrency: 4, Duration: 5 * time.Second, MaxRequests: 100}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 100 || res.Status[200] != 100 || res.Errors != 0 {
		t.Fatalf("got %d requests (%v, %d errors), want exactly 100 OK", res.Requests, res.Status, res.Errors)
	}
	if res.RPS() <= 0 || res.Percentile(50) <= 0 {
		t.Fatalf("empty statistics: %+v", res)
	}
}
