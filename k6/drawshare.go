package k6

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// DrawShare measures what a bot wins of a pre-queue draw: a room opens its
// pre-queue now and draws it after Prequeue; meanwhile a legitimate crowd
// from many /24 networks (1 to 3 buyers each, X-Forwarded-For) joins at
// CrowdRate and Bot joins as much as it can. After the draw it compares
// the bot's share of the first Top drawn places with its share of the
// joins. The server must trust loopback as a proxy.
type DrawShare struct {
	URL, Room, AdminToken string
	// Challenge is the room's challenge setting ("off", "auto", "always";
	// "": the server's default).
	Challenge string
	Prequeue  time.Duration
	// CrowdRate is the crowd's joins per second.
	CrowdRate float64
	// Top is how many of the first drawn places to count (0: 1,000).
	Top int
	// Bot joins from one address; its URL, Room and Duration are set here
	// (its Progress reports the run's progress).
	Bot PowBot
	// DrawTimeout bounds the wait for the draw after the opening (0: 1m).
	DrawTimeout time.Duration
}

// DrawShareReport is the draw's outcome for the bot and the crowd.
type DrawShareReport struct {
	Room, Challenge string
	// CrowdTried and CrowdJoined count the crowd's buyers and their
	// places; CrowdRefused its refusals.
	CrowdTried, CrowdJoined int
	CrowdRefused            map[string]int64
	// CrowdNets is how many /24 networks the crowd came from.
	CrowdNets int
	// CrowdChallenge is the crowd's time on the challenge here, sorted.
	CrowdChallenge []time.Duration
	Bot            PowBotReport
	// Workers is the bot's workers.
	Workers int
	// Drawn is the number of drawn places, BotDrawn the bot's of them,
	// Top the places counted and BotTop the bot's among them.
	Drawn, BotDrawn, Top, BotTop int
	// Missing counts the places the crowd and the bot were given that
	// are not in the draw; CutShort the joins under way at the opening.
	Missing, CutShort int
}

// JoinShare is the bot's share of the drawn joins.
func (r DrawShareReport) JoinShare() float64 {
	if r.Drawn == 0 {
		return 0
	}
	return float64(r.BotDrawn) / float64(r.Drawn)
}

// TopShare is the bot's share of the first Top drawn places.
func (r DrawShareReport) TopShare() float64 {
	if r.Top == 0 {
		return 0
	}
	return float64(r.BotTop) / float64(r.Top)
}

// Validate returns an error for a run that is unbounded or aims anywhere
// but loopback.
func (d DrawShare) Validate() error {
	bot := d.Bot
	bot.URL, bot.Room, bot.Duration, bot.Source = d.URL, d.Room, d.Prequeue, SourceOne
	if err := bot.Validate(); err != nil {
		return fmt.Errorf("drawshare: %w", err)
	}
	switch {
	case d.AdminToken == "":
		return errors.New("drawshare: no admin token")
	case d.Prequeue < time.Second || d.Prequeue > 10*time.Minute:
		return fmt.Errorf("drawshare: pre-queue %v out of 1s..10m", d.Prequeue)
	case d.CrowdRate <= 0 || d.CrowdRate > 10_000:
		return fmt.Errorf("drawshare: crowd rate %v out of (0, 10000]", d.CrowdRate)
	case d.Top < 0:
		return errors.New("drawshare: top must not be negative")
	}
	return nil
}

// Run makes (or remakes) the room, runs the crowd and the bot through its
// pre-queue and reads the draw.
func (d DrawShare) Run(ctx context.Context) (DrawShareReport, error) {
	if err := d.Validate(); err != nil {
		return DrawShareReport{}, err
	}
	top := d.Top
	if top == 0 {
		top = 1000
	}
	now := time.Now().Truncate(time.Second)
	opens := now.Add(d.Prequeue + time.Second)
	_ = DeleteRoom(ctx, d.URL, d.Room, d.AdminToken) // a room left by an earlier run; none is fine
	settings := map[string]any{"title": "Draw share " + d.Challenge, "prequeueAt": now.Format(time.RFC3339), "opensAt": opens.Format(time.RFC3339)}
	if d.Challenge != "" {
		settings["challenge"] = d.Challenge
	}
	err := PutRoom(ctx, d.URL, d.Room, d.AdminToken, settings)
	if err != nil {
		return DrawShareReport{}, fmt.Errorf("drawshare: %w", err)
	}
	rep := DrawShareReport{Room: d.Room, Challenge: d.Challenge, Workers: d.Bot.Workers}
	pctx, cancel := context.WithDeadline(ctx, opens.Add(-200*time.Millisecond))
	defer cancel()
	bot := d.Bot
	bot.URL, bot.Room, bot.Duration, bot.Source = d.URL, d.Room, time.Until(opens.Add(-200*time.Millisecond)), SourceOne
	var (
		wg         sync.WaitGroup
		botErr     error
		crowd      []Join
		crowdNets  int
		crowdTried int
	)
	wg.Go(func() { rep.Bot, botErr = bot.Run(pctx) })
	crowd, crowdNets, crowdTried = d.crowd(pctx)
	wg.Wait()
	if botErr != nil {
		return rep, botErr
	}
	var refused Tally
	crowdTickets := map[int64]bool{}
	for _, j := range crowd {
		if j.Status == http.StatusOK {
			rep.CrowdJoined++
			crowdTickets[j.Ticket] = true
		} else {
			refused.Add(j.Refusal())
		}
		if j.Challenged {
			rep.CrowdChallenge = append(rep.CrowdChallenge, j.Challenge)
		}
	}
	slices.Sort(rep.CrowdChallenge)
	rep.CrowdTried, rep.CrowdNets, rep.CrowdRefused = crowdTried, crowdNets, refused.Counts()
	drawn, err := d.waitDraw(ctx, opens)
	if err != nil {
		return rep, err
	}
	botTickets := make(map[int64]bool, len(rep.Bot.Tickets))
	for _, t := range rep.Bot.Tickets {
		botTickets[t] = true
	}
	rep.Drawn, rep.Top = len(drawn), min(top, len(drawn))
	rep.CutShort = crowdTried - len(crowd) + d.Bot.Workers
	inDraw := make(map[int64]bool, len(drawn))
	for i, t := range drawn {
		inDraw[t] = true
		if botTickets[t] {
			rep.BotDrawn++
			if i < rep.Top {
				rep.BotTop++
			}
		}
	}
	for _, tickets := range []map[int64]bool{botTickets, crowdTickets} {
		for t := range tickets {
			if !inDraw[t] {
				rep.Missing++
			}
		}
	}
	return rep, nil
}

// crowd runs the legitimate buyers until ctx ends: one arrival every
// 1/CrowdRate, each network of 1 to 3 buyers from its own /24. It returns
// their joins, the networks used and the buyers started.
func (d DrawShare) crowd(ctx context.Context) ([]Join, int, int) {
	tr := &http.Transport{MaxIdleConnsPerHost: 100, DisableCompression: true}
	defer tr.CloseIdleConnections()
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var (
		mu    sync.Mutex
		joins []Join
		wg    sync.WaitGroup
	)
	interval := time.Duration(float64(time.Second) / d.CrowdRate)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	nets, left, tried := 0, 0, 0
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return joins, nets, tried
		case <-tick.C:
		}
		if left == 0 {
			nets++
			left = 1 + rand.IntN(3)
		}
		left--
		tried++
		// network n is 10.(n/256).(n%256).0/24, from 10.0.1.0/24 on.
		addr := fmt.Sprintf("10.%d.%d.%d", (nets/256)%256, nets%256, 10+left)
		wg.Go(func() {
			e := Entrant{Client: NewGateClient(tr), Base: d.URL, Room: d.Room, Solvers: slots,
				Header: http.Header{"X-Forwarded-For": {addr}}}
			j, err := e.Enter(ctx)
			if err != nil && ctx.Err() != nil {
				return // cut short by the opening: not counted
			}
			if err != nil && j.Error == "" {
				j.Error = "no answer"
			}
			mu.Lock()
			joins = append(joins, j)
			mu.Unlock()
		})
	}
}

// waitDraw polls GET /api/rooms/{room}/draw from the opening until the
// draw is done, and returns the drawn tickets in order.
func (d DrawShare) waitDraw(ctx context.Context, opens time.Time) ([]int64, error) {
	limit := d.DrawTimeout
	if limit <= 0 {
		limit = time.Minute
	}
	ctx, cancel := context.WithDeadline(ctx, opens.Add(limit))
	defer cancel()
	u := strings.TrimRight(d.URL, "/") + "/api/rooms/" + url.PathEscape(d.Room) + "/draw"
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("drawshare: the draw of %s was not done %v after the opening", d.Room, limit)
		case <-time.After(max(time.Until(opens), 250*time.Millisecond)):
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, fmt.Errorf("drawshare: %w", err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		var info struct {
			Done    bool    `json:"done"`
			Tickets []int64 `json:"tickets"`
		}
		err = json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(&info)
		resp.Body.Close()
		if err == nil && resp.StatusCode == http.StatusOK && info.Done {
			return info.Tickets, nil
		}
	}
}

// Check fails a draw that is not the pre-queue's joins: every place the
// crowd and the bot were told of is drawn, and at most the joins cut short
// by the opening (whose answers never came) besides.
func (r DrawShareReport) Check() error {
	switch joined := r.CrowdJoined + int(r.Bot.Placed); {
	case r.Missing > 0:
		return fmt.Errorf("drawshare %s: %d of the crowd's and the bot's places are not in the draw", r.Room, r.Missing)
	case r.Drawn > joined+r.CutShort:
		return fmt.Errorf("drawshare %s: %d places drawn, but the crowd joined %d and the bot %d, and %d joins were cut short",
			r.Room, r.Drawn, r.CrowdJoined, r.Bot.Placed, r.CutShort)
	}
	return nil
}

func (r DrawShareReport) String() string {
	return fmt.Sprintf("drawshare %s (challenge %s): crowd %d joined of %d tried from %d /24 networks (refused: %s; time on the challenge here p50 %v, p95 %v)\n"+
		"  bot (one address, %d workers): %d placed of %d tried, refused: %s\n"+
		"  drawn %d places, %d the bot's: bot's share of the joins %.1f%%, of the first %d drawn places %.1f%% (%d)\n",
		r.Room, r.Challenge, r.CrowdJoined, r.CrowdTried, r.CrowdNets, FormatCounts(r.CrowdRefused),
		Percentile(r.CrowdChallenge, 50).Round(time.Millisecond), Percentile(r.CrowdChallenge, 95).Round(time.Millisecond),
		r.Workers, r.Bot.Placed, r.Bot.Attempts, FormatCounts(r.Bot.Refused),
		r.Drawn, r.BotDrawn, 100*r.JoinShare(), r.Top, 100*r.TopShare(), r.BotTop)
}
