package k6

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/altcha-org/altcha-lib-go"
)

// challengeRoom is a stand-in for the server's side of the proof of work:
// with challenge set, an enter without a verified X-Altcha is 428
// challenge_required; refuse, when set, is the code answered to a
// verified proof instead of a place.
type challengeRoom struct {
	mu           sync.Mutex
	challenge    bool
	refuse       string
	challengeOff bool
	number       int64
	forwarded    []string
	tickets      int64
	// limitProofs is how many posted proofs are answered 429.
	limitProofs int
}

func (c *challengeRoom) saw(r *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forwarded = append(c.forwarded, r.Header.Get("X-Forwarded-For"))
}

func (c *challengeRoom) handler(t *testing.T) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/rooms/sale/queue", func(w http.ResponseWriter, r *http.Request) {
		c.saw(r)
		w.Header().Set("Content-Type", "application/json")
		if c.challenge {
			p := r.Header.Get("X-Altcha")
			if p == "" {
				w.WriteHeader(http.StatusPreconditionRequired)
				fmt.Fprint(w, `{"error":"challenge_required","message":"…","challenge":"/api/rooms/sale/challenge"}`)
				return
			}
			if ok, err := altcha.VerifySolutionSafe(p, testHMACKey, true); !ok || err != nil {
				t.Errorf("the proof %q does not verify: %v", p, err)
				w.WriteHeader(http.StatusPreconditionRequired)
				fmt.Fprint(w, `{"error":"challenge_invalid"}`)
				return
			}
			c.mu.Lock()
			limited := c.limitProofs > 0
			c.limitProofs--
			c.mu.Unlock()
			if limited {
				w.Header().Set("Retry-After", "2")
				w.WriteHeader(http.StatusTooManyRequests)
				fmt.Fprint(w, `{"error":"rate_limited"}`)
				return
			}
			if c.refuse != "" {
				w.WriteHeader(http.StatusPreconditionRequired)
				fmt.Fprintf(w, `{"error":%q}`, c.refuse)
				return
			}
		}
		c.mu.Lock()
		c.tickets++
		ticket := 41 + c.tickets
		c.mu.Unlock()
		fmt.Fprintf(w, `{"status":"WAITING","ticket":%d}`, ticket)
	})
	mux.HandleFunc("GET /api/rooms/sale/challenge", func(w http.ResponseWriter, r *http.Request) {
		c.saw(r)
		if c.challengeOff {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"challenge_off"}`)
			return
		}
		writeJSONTest(w, testChallenge(t, 5000, c.number))
	})
	return mux
}

func TestEnterRoom(t *testing.T) {
	tests := []struct {
		name string
		room *challengeRoom
		want Join
	}{
		{"no challenge", &challengeRoom{}, Join{Status: 200, Ticket: 42}},
		{"a challenge solved", &challengeRoom{challenge: true, number: 1234},
			Join{Status: 200, Ticket: 42, Challenged: true, MaxNumber: 5000, Hashes: 1235}},
		{"a solution refused", &challengeRoom{challenge: true, number: 7, refuse: "challenge_used"},
			Join{Status: 428, Error: "challenge_used", Challenged: true, MaxNumber: 5000, Hashes: 8}},
		{"no challenge to fetch", &challengeRoom{challenge: true, challengeOff: true},
			Join{Status: 404, Error: "challenge_fetch", Challenged: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.room.handler(t))
			defer srv.Close()
			hdr := http.Header{"X-Forwarded-For": {"198.51.100.7"}}
			got, err := EnterRoom(context.Background(), NewGateClient(nil), srv.URL, "sale", hdr)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want.Challenged && got.Challenge <= 0 {
				t.Errorf("no time counted on the challenge")
			}
			got.Challenge = 0
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if len(tt.room.forwarded) == 0 {
				t.Error("the room saw no request")
			}
			for _, f := range tt.room.forwarded {
				if f != "198.51.100.7" {
					t.Errorf("a request went with X-Forwarded-For %q", f)
				}
			}
		})
	}
}

func TestEnterRoomCancelled(t *testing.T) {
	room := challengeRoom{challenge: true, number: 10}
	srv := httptest.NewServer(room.handler(t))
	defer srv.Close()
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second)) // past already
	defer cancel()
	if _, err := EnterRoom(ctx, NewGateClient(nil), srv.URL, "sale", nil); err == nil {
		t.Fatal("a cancelled enter answered no error")
	}
}

func writeJSONTest(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// TestEnterRoomProofRetry: with ProofRetry, a proof answered 429 is posted
// again rather than wasted; without, the 429 is the answer, with its
// Retry-After.
func TestEnterRoomProofRetry(t *testing.T) {
	room := &challengeRoom{challenge: true, number: 5, limitProofs: 2}
	srv := httptest.NewServer(room.handler(t))
	defer srv.Close()
	e := Entrant{Client: NewGateClient(nil), Base: srv.URL, Room: "sale"}
	j, err := e.Enter(context.Background())
	if err != nil || j.Status != http.StatusTooManyRequests || j.RetryAfter != 2*time.Second || j.Hashes != 6 {
		t.Fatalf("without ProofRetry: %+v, %v", j, err)
	}
	e.ProofRetry = time.Millisecond
	j, err = e.Enter(context.Background())
	if err != nil || j.Status != http.StatusOK || j.Hashes != 6 || len(room.forwarded) != 7 {
		t.Fatalf("with ProofRetry: %+v, %v, %d requests", j, err, len(room.forwarded))
	}
}
