package k6

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The sources a PowBot sends its identities from.
const (
	// SourceOne: every identity from 127.0.0.1, without X-Forwarded-For.
	SourceOne = "one"
	// SourceV6: every identity from a random address of one IPv6 /64, in
	// X-Forwarded-For (the server must trust loopback as a proxy).
	SourceV6 = "v6-64"
)

// PowBot is a bot with all of this machine's CPU placing as many
// identities as it can in a room for Duration: each identity is a fresh
// cookie jar that enters, solving the challenge when the room asks.
type PowBot struct {
	URL, Room string
	// Workers is the identities under way at once.
	Workers  int
	Duration time.Duration
	// Source is SourceOne or SourceV6.
	Source string
	// Net is the /64 of SourceV6 (zero: a random one of 2001:db8::/32).
	Net netip.Prefix
	// BackOff is the pause after a 429 (0: 20 ms): the bot keeps the
	// per-address limit drained without spinning on refusals, and posts a
	// solved proof again rather than waste it.
	BackOff       time.Duration
	Progress      io.Writer
	ProgressEvery time.Duration
}

// PowBotReport is what the bot placed, and what it cost the bot.
type PowBotReport struct {
	Room, Source string
	// Attempts counts the identities tried, Placed those that got a place.
	Attempts, Placed int64
	// Refused counts the refused attempts by status and error.
	Refused map[string]int64
	// Challenged counts the attempts the room asked a proof of, Hashes
	// their search's hashes.
	Challenged, Hashes int64
	// MaxNumber is the issued challenges' maxNumber, sorted.
	MaxNumber []int64
	// Tickets are the placed identities' tickets.
	Tickets []int64
	// CPU is the bot process's user and system time over the run.
	CPU     time.Duration
	Elapsed time.Duration
}

// PerCPUSecond is identities placed per CPU-second of the bot.
func (r PowBotReport) PerCPUSecond() float64 {
	if r.CPU <= 0 {
		return 0
	}
	return float64(r.Placed) / r.CPU.Seconds()
}

// Validate returns an error for a bot that is unbounded or aims anywhere
// but loopback.
func (b PowBot) Validate() error {
	if err := (Load{URL: b.URL, Concurrency: 1, Duration: time.Second}).Validate(); err != nil {
		return err
	}
	switch {
	case b.Room == "":
		return errors.New("powbot: no room")
	case b.Workers < 1 || b.Workers > 10_000:
		return fmt.Errorf("powbot: workers %d out of 1..10000", b.Workers)
	case b.Duration <= 0 || b.Duration > 10*time.Minute:
		return errors.New("powbot: duration must be positive, at most 10m")
	case b.Source != SourceOne && b.Source != SourceV6:
		return fmt.Errorf("powbot: source %q is neither %s nor %s", b.Source, SourceOne, SourceV6)
	case b.Net.IsValid() && (!b.Net.Addr().Is6() || b.Net.Bits() != 64):
		return fmt.Errorf("powbot: %v is not an IPv6 /64", b.Net)
	}
	return nil
}

// CPUTime returns this process's user and system CPU time so far.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// randomV6Net returns a random /64 of the documentation range.
func randomV6Net() netip.Prefix {
	var a [16]byte
	a[0], a[1], a[2], a[3] = 0x20, 0x01, 0x0d, 0xb8
	for i := 4; i < 8; i++ {
		a[i] = byte(rand.UintN(256))
	}
	return netip.PrefixFrom(netip.AddrFrom16(a), 64)
}

// randomIn returns a random address of the /64 p.
func randomIn(p netip.Prefix) netip.Addr {
	a := p.Addr().As16()
	for i := 8; i < 16; i++ {
		a[i] = byte(rand.UintN(256))
	}
	return netip.AddrFrom16(a)
}

// Run runs the bot for Duration.
func (b PowBot) Run(ctx context.Context) (PowBotReport, error) {
	if err := b.Validate(); err != nil {
		return PowBotReport{}, err
	}
	if !b.Net.IsValid() {
		b.Net = randomV6Net()
	}
	backOff := b.BackOff
	if backOff <= 0 {
		backOff = 20 * time.Millisecond
	}
	tr := &http.Transport{MaxIdleConnsPerHost: b.Workers, DisableCompression: true}
	defer tr.CloseIdleConnections()
	var (
		attempts, placed, challenged, hashes atomic.Int64
		refused                              Tally
		mu                                   sync.Mutex
		maxNumbers, tickets                  []int64
	)
	rctx, cancel := context.WithTimeout(ctx, b.Duration)
	defer cancel()
	start, cpu0 := time.Now(), CPUTime()
	if b.Progress != nil {
		stop := every(b.ProgressEvery, func() {
			fmt.Fprintf(b.Progress, "powbot %s, %.0f s: %d identities placed of %d tried, %d challenged\n",
				b.Room, time.Since(start).Seconds(), placed.Load(), attempts.Load(), challenged.Load())
		})
		defer stop()
	}
	var wg sync.WaitGroup
	for range b.Workers {
		wg.Go(func() {
			for rctx.Err() == nil {
				e := Entrant{Client: NewGateClient(tr), Base: b.URL, Room: b.Room, ProofRetry: backOff}
				if b.Source == SourceV6 {
					e.Header = http.Header{"X-Forwarded-For": {randomIn(b.Net).String()}}
				}
				j, err := e.Enter(rctx)
				if err != nil && rctx.Err() != nil {
					return // cut short by the end of the run: not an attempt
				}
				attempts.Add(1)
				if j.Challenged {
					challenged.Add(1)
					hashes.Add(j.Hashes)
					mu.Lock()
					maxNumbers = append(maxNumbers, j.MaxNumber)
					mu.Unlock()
				}
				switch {
				case err != nil:
					refused.Add("no answer")
				case j.Status == http.StatusOK:
					placed.Add(1)
					mu.Lock()
					tickets = append(tickets, j.Ticket)
					mu.Unlock()
				default:
					refused.Add(j.Refusal())
				}
				if j.Status == http.StatusTooManyRequests || err != nil {
					select {
					case <-rctx.Done():
					case <-time.After(backOff):
					}
				}
			}
		})
	}
	wg.Wait()
	r := PowBotReport{Room: b.Room, Source: b.Source, Attempts: attempts.Load(), Placed: placed.Load(),
		Refused: refused.Counts(), Challenged: challenged.Load(), Hashes: hashes.Load(),
		MaxNumber: maxNumbers, Tickets: tickets, CPU: CPUTime() - cpu0, Elapsed: time.Since(start)}
	slices.Sort(r.MaxNumber)
	return r, nil
}

func (r PowBotReport) String() string {
	return fmt.Sprintf("powbot %s (source %s): %d identities placed of %d tried in %.1f s, %.2f CPU-s: %.1f identities per CPU-second\n"+
		"  challenged %d, %.1f M hashes, issued maxNumber p50 %d, p95 %d, max %d; refused: %s\n",
		r.Room, r.Source, r.Placed, r.Attempts, r.Elapsed.Seconds(), r.CPU.Seconds(), r.PerCPUSecond(),
		r.Challenged, float64(r.Hashes)/1e6, PercentileInt(r.MaxNumber, 50), PercentileInt(r.MaxNumber, 95),
		PercentileInt(r.MaxNumber, 100), FormatCounts(r.Refused))
}
