package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"waitingroom/server/draw"
)

func TestVerifyDraw(t *testing.T) {
	seed, _ := hex.DecodeString(strings.Repeat("c3", 32))
	good := publishedDraw{Commitment: draw.Commitment(seed), Done: true, Seed: hex.EncodeToString(seed),
		Tickets: draw.Tickets(seed, []int64{1, 2, 3, 5, 8, 13, 21, 34})}
	swapped := good
	swapped.Tickets = append([]int64(nil), good.Tickets...)
	swapped.Tickets[2], swapped.Tickets[3] = swapped.Tickets[3], swapped.Tickets[2]
	otherSeed := good
	otherSeed.Commitment = draw.Commitment([]byte("another seed"))
	notDone := publishedDraw{Commitment: good.Commitment}
	dir := t.TempDir()
	tests := []struct {
		name  string
		d     publishedDraw
		extra []string
		code  int
		out   string
	}{
		{"a true draw", good, []string{"-ticket", "13"}, 0, "drew place"},
		{"two places swapped", swapped, nil, 1, "place 3"},
		{"a seed that is not the committed one", otherSeed, nil, 1, "commitment"},
		{"a commitment other than the one seen", good, []string{"-commitment", otherSeed.Commitment}, 1, "not the one you saw"},
		{"not drawn yet", notDone, nil, 1, "not done"},
	}
	for _, tt := range tests {
		b, _ := json.Marshal(tt.d)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/api/rooms/sale/draw" {
				http.NotFound(w, r)
				return
			}
			w.Write(b)
		}))
		file := filepath.Join(dir, "draw.json")
		os.WriteFile(file, b, 0o644)
		for _, args := range [][]string{{"-url", srv.URL, "-room", "sale"}, {"-file", file}} {
			var out, errOut bytes.Buffer
			err := run(context.Background(), append(append([]string{"verify-draw"}, args...), tt.extra...), &out, &errOut)
			code := exitCode(err, &out, &errOut)
			if code != tt.code || !strings.Contains(out.String()+errOut.String(), tt.out) {
				t.Errorf("%s %v: exit %d, %q %q; want exit %d and %q", tt.name, args, code, out.String(), errOut.String(), tt.code, tt.out)
			}
		}
		srv.Close()
	}
}
