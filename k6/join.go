package k6

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/altcha-org/altcha-lib-go"
)

// Join is the outcome of one enter through the JSON API, the proof of work
// included.
type Join struct {
	// Status is the last answer's HTTP status (200: a place).
	Status int
	// Error is the JSON "error" code of a refusal ("" none).
	Error  string
	Ticket int64
	// Challenged reports that the server asked for a proof (428
	// challenge_required) and the buyer fetched and solved one.
	Challenged bool
	// MaxNumber is the issued challenge's maxNumber, Hashes the hashes
	// its solution took.
	MaxNumber, Hashes int64
	// Challenge is the time spent on the challenge: fetching and solving.
	Challenge time.Duration
}

// Refusal names a refused join for the reports: its status and error code.
func (j Join) Refusal() string {
	if j.Error == "" {
		return fmt.Sprint(j.Status)
	}
	return fmt.Sprintf("%d %s", j.Status, j.Error)
}

// maxAnswer bounds what a join reads of an answer.
const maxAnswer = 16 << 10

// EnterRoom joins room on the server at base as a browser's page does:
// POST /api/rooms/{room}/queue with hc (its cookie jar is the identity);
// answered 428 challenge_required, it fetches the challenge, solves it and
// posts again with X-Altcha. hdr (may be nil) goes with every request, e.g.
// X-Forwarded-For. A refusal is a Join with its status; the error is for
// a request that got no answer.
func EnterRoom(ctx context.Context, hc *http.Client, base, room string, hdr http.Header) (Join, error) {
	api := strings.TrimRight(base, "/") + "/api/rooms/" + url.PathEscape(room)
	j, challengePath, err := postEnter(ctx, hc, api+"/queue", hdr, "")
	if err != nil || j.Status != http.StatusPreconditionRequired || j.Error != "challenge_required" {
		return j, err
	}
	began := time.Now()
	u := api + "/challenge"
	if challengePath != "" {
		b, _ := url.Parse(base)
		if p, err := b.Parse(challengePath); err == nil {
			u = p.String()
		}
	}
	c, status, err := fetchChallenge(ctx, hc, u, hdr)
	if err != nil || status != http.StatusOK {
		return Join{Status: status, Error: "challenge_fetch", Challenged: true, Challenge: time.Since(began)}, err
	}
	s, err := Solve(ctx, c)
	if err != nil {
		return Join{Challenged: true, MaxNumber: c.MaxNumber, Hashes: s.Hashes, Challenge: time.Since(began)}, fmt.Errorf("enter %s: %w", room, err)
	}
	took := time.Since(began)
	j, _, err = postEnter(ctx, hc, api+"/queue", hdr, s.Payload)
	j.Challenged, j.MaxNumber, j.Hashes, j.Challenge = true, c.MaxNumber, s.Hashes, took
	return j, err
}

// postEnter posts an enter (with the proof payload, when not "") and
// reads the answer: the ticket, or the refusal's error code and the
// challenge's path.
func postEnter(ctx context.Context, hc *http.Client, u string, hdr http.Header, payload string) (Join, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return Join{}, "", fmt.Errorf("enter: %w", err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if payload != "" {
		req.Header.Set("X-Altcha", payload)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Join{}, "", fmt.Errorf("enter: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return Join{Status: resp.StatusCode}, "", fmt.Errorf("enter: %w", err)
	}
	var a struct {
		Ticket    int64  `json:"ticket"`
		Error     string `json:"error"`
		Challenge string `json:"challenge"`
	}
	_ = json.Unmarshal(body, &a) // a refusal may be a page, not JSON
	j := Join{Status: resp.StatusCode, Error: a.Error}
	if resp.StatusCode == http.StatusOK {
		j.Ticket, j.Error = a.Ticket, ""
	}
	return j, a.Challenge, nil
}

// fetchChallenge GETs an ALTCHA challenge.
func fetchChallenge(ctx context.Context, hc *http.Client, u string, hdr http.Header) (altcha.Challenge, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return altcha.Challenge{}, 0, fmt.Errorf("challenge: %w", err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := hc.Do(req)
	if err != nil {
		return altcha.Challenge{}, 0, fmt.Errorf("challenge: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil || resp.StatusCode != http.StatusOK {
		return altcha.Challenge{}, resp.StatusCode, err
	}
	var c altcha.Challenge
	if err := json.Unmarshal(body, &c); err != nil {
		return altcha.Challenge{}, resp.StatusCode, fmt.Errorf("challenge: %w", err)
	}
	return c, resp.StatusCode, nil
}
