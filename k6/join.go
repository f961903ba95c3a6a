package k6

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
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
	// RetryAfter is a refusal's Retry-After (0: none).
	RetryAfter time.Duration
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

// Entrant joins a room as a browser's page does: POST
// /api/rooms/{room}/queue; answered 428 challenge_required, it fetches the
// challenge, solves it and posts again with X-Altcha.
type Entrant struct {
	// Client's cookie jar is the identity.
	Client     *http.Client
	Base, Room string
	// Header (may be nil) goes with every request, e.g. X-Forwarded-For.
	Header http.Header
	// Solvers, when not nil, bounds the solves under way: each takes a
	// slot for its search, and the wait for one counts as time on the
	// challenge (buyers that share this machine's cores queue for them).
	Solvers chan struct{}
	// ProofRetry, when positive, is the pause before the solved proof is
	// posted again after a 429 (a bot keeps what it paid for); zero
	// answers the 429.
	ProofRetry time.Duration
}

// EnterRoom joins room on the server at base with hc and hdr (an Entrant
// without a bound on its solves).
func EnterRoom(ctx context.Context, hc *http.Client, base, room string, hdr http.Header) (Join, error) {
	return Entrant{Client: hc, Base: base, Room: room, Header: hdr}.Enter(ctx)
}

// Enter joins the room. A refusal is a Join with its status; the error is
// for a request that got no answer, or a search that did not end.
func (e Entrant) Enter(ctx context.Context) (Join, error) {
	hc, hdr := e.Client, e.Header
	api := strings.TrimRight(e.Base, "/") + "/api/rooms/" + url.PathEscape(e.Room)
	j, challengePath, err := postEnter(ctx, hc, api+"/queue", hdr, "")
	if err != nil || j.Status != http.StatusPreconditionRequired || j.Error != "challenge_required" {
		return j, err
	}
	began := time.Now()
	u := api + "/challenge"
	if challengePath != "" {
		b, _ := url.Parse(e.Base)
		if p, err := b.Parse(challengePath); err == nil {
			u = p.String()
		}
	}
	c, status, err := fetchChallenge(ctx, hc, u, hdr)
	if err != nil || status != http.StatusOK {
		return Join{Status: status, Error: "challenge_fetch", Challenged: true, Challenge: time.Since(began)}, err
	}
	s, err := e.solve(ctx, c)
	if err != nil {
		return Join{Challenged: true, MaxNumber: c.MaxNumber, Hashes: s.Hashes, Challenge: time.Since(began)}, fmt.Errorf("enter %s: %w", e.Room, err)
	}
	took := time.Since(began)
	for {
		j, _, err = postEnter(ctx, hc, api+"/queue", hdr, s.Payload)
		j.Challenged, j.MaxNumber, j.Hashes, j.Challenge = true, c.MaxNumber, s.Hashes, took
		if err != nil || j.Status != http.StatusTooManyRequests || e.ProofRetry <= 0 {
			return j, err
		}
		select {
		case <-ctx.Done():
			return j, fmt.Errorf("enter %s: %w", e.Room, ctx.Err())
		case <-time.After(e.ProofRetry):
		}
	}
}

// solve solves c in one of the Solvers' slots.
func (e Entrant) solve(ctx context.Context, c altcha.Challenge) (Solved, error) {
	if e.Solvers != nil {
		select {
		case e.Solvers <- struct{}{}:
			defer func() { <-e.Solvers }()
		case <-ctx.Done():
			return Solved{}, fmt.Errorf("solve: %w", ctx.Err())
		}
	}
	return Solve(ctx, c)
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
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
		j.RetryAfter = time.Duration(min(secs, 60)) * time.Second
	}
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
