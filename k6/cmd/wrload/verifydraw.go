package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"waitingroom/server/draw"
)

// maxDrawBody bounds a fetched or read draw: 20 digits and a comma for
// each of 10 million tickets.
const maxDrawBody = 210 << 20

// publishedDraw is the JSON of GET /api/rooms/{room}/draw.
type publishedDraw struct {
	Commitment string  `json:"commitment"`
	Done       bool    `json:"done"`
	Seed       string  `json:"seed"`
	Tickets    []int64 `json:"tickets"`
}

// verifyDrawCommand fetches (or reads) a room's published draw and checks
// it: sha256(seed) is the commitment, and the tickets are in the order the
// seed gives. Any mismatch exits non-zero.
func verifyDrawCommand(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := flag.NewFlagSet("verify-draw", flag.ContinueOnError)
	base := fs.String("url", "", "the server's base URL, e.g. http://127.0.0.1:8080")
	roomName := fs.String("room", "", "the room whose draw to fetch from -url")
	file := fs.String("file", "", "a saved draw JSON (the draw endpoint's answer) instead of -url")
	commitment := fs.String("commitment", "", "the commitment you saw published before opening (optional; checked against the answer's)")
	ticket := fs.Int64("ticket", 0, "your ticket number: print your place in the drawn order (optional)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var raw []byte
	var err error
	switch {
	case *file != "" && *base == "":
		raw, err = readLimited(*file)
	case *file == "" && *base != "" && *roomName != "":
		raw, err = fetchDraw(ctx, *base, *roomName)
	default:
		return &usageError{err: errors.New("verify-draw: give -url and -room, or -file"), text: "give -url and -room, or -file\n"}
	}
	if err != nil {
		return fmt.Errorf("verify-draw: %w", err)
	}
	var d publishedDraw
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("verify-draw: the draw is not JSON: %w", err)
	}
	if !d.Done {
		return errors.New("verify-draw: the draw is not done yet (only the commitment is published)")
	}
	if *commitment != "" && *commitment != d.Commitment {
		return fmt.Errorf("verify-draw: the published commitment %s is not the one you saw, %s", d.Commitment, *commitment)
	}
	if err := draw.Verify(d.Commitment, d.Seed, d.Tickets); err != nil {
		return fmt.Errorf("verify-draw: %w", err)
	}
	fmt.Fprintf(stdout, "verify-draw: OK: %d tickets in the order seed %s gives; sha256(seed) = %s\n", len(d.Tickets), d.Seed, d.Commitment)
	if *ticket > 0 {
		for i, t := range d.Tickets {
			if t == *ticket {
				fmt.Fprintf(stdout, "ticket %d drew place %d of %d\n", t, i+1, len(d.Tickets))
				return nil
			}
		}
		return fmt.Errorf("verify-draw: ticket %d is not in the draw", *ticket)
	}
	return nil
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxDrawBody))
}

func fetchDraw(ctx context.Context, base, roomName string) ([]byte, error) {
	u, err := url.JoinPath(base, "api", "rooms", roomName, "draw")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDrawBody))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %.200s", u, resp.Status, b)
	}
	return b, nil
}
