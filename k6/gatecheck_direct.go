package k6

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// GateCheckDirect measures waitingroom's GET /gate/check with a live
// session, asked directly (no nginx), beside a hello-world server asked
// by the same client with the same number of workers, in alternating
// rounds of one run: the check's tail is judged against what any Go HTTP
// server answers on the same machine at the same time.
type GateCheckDirect struct {
	// RoomURL is a running waitingroom; AdminToken its ADMIN_TOKEN.
	RoomURL, AdminToken string
	// Room is made or updated into a gate-mode room for the run.
	Room string
	// HelloURL is a hello-world server (`wrload loadtest -serve-hello`);
	// "" serves one in this process, beside the client.
	HelloURL    string
	Concurrency int
	// Duration is the length of each leg of each round.
	Duration time.Duration
	// Rounds of a hello-world leg, then a check leg.
	Rounds int
	// MaxUnexpected is the share of answers other than the one expected
	// past which a leg fails.
	MaxUnexpected float64
}

// GateCheckLeg is one leg of one round, or (Round 0) a leg's rounds
// pooled.
type GateCheckLeg struct {
	Name   string
	Round  int
	Result Result
	// ClientCPU is this process's CPU time during the leg: the load
	// generator's cost (and the hello-world server's, when served here).
	ClientCPU time.Duration
	// Busy is the machine's busy share of all its cores during the leg
	// (/proc/stat; 0 where unknown).
	Busy float64
}

// The legs' names.
const (
	LegHello = "hello-world"
	LegCheck = "GET /gate/check"
)

// Validate returns an error for a run that is unbounded or aims anywhere
// but loopback.
func (g GateCheckDirect) Validate() error {
	if err := validateLoads(g.Concurrency, g.Duration, g.RoomURL, g.HelloURL); err != nil {
		return err
	}
	switch {
	case g.RoomURL == "":
		return errors.New("gatecheck: no waitingroom URL")
	case g.AdminToken == "" || g.Room == "":
		return errors.New("gatecheck: the admin token and the room are required")
	case g.Duration > 2*time.Minute:
		return fmt.Errorf("gatecheck: duration %v over 2m per leg", g.Duration)
	case g.Rounds < 1 || g.Rounds > 20:
		return fmt.Errorf("gatecheck: rounds %d out of 1..20", g.Rounds)
	}
	return nil
}

// Run sets the room up, lets one buyer through the line to a session,
// measures round after round with that session's cookie, then ends the
// session and deletes the room. It returns every round's legs, then the
// two legs pooled over the rounds (Round 0).
func (g GateCheckDirect) Run(ctx context.Context, progress io.Writer) ([]GateCheckLeg, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	hello := strings.TrimRight(g.HelloURL, "/")
	if hello == "" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("gatecheck: hello-world: %w", err)
		}
		srv := &http.Server{Handler: HelloHandler(), ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		hello = "http://" + ln.Addr().String()
		fmt.Fprintf(progress, "gatecheck: hello-world on %s, in this process\n", ln.Addr())
	}
	// The shop is waitingroom itself: the hand-off (/_waitingroom/enter)
	// is served on its own listener, as nginx would pass it on.
	apiKey, err := gateRoom(ctx, g.RoomURL, g.Room, g.AdminToken, strings.TrimRight(g.RoomURL, "/")+"/checkout")
	if err != nil {
		return nil, err
	}
	defer DeleteRoom(context.Background(), g.RoomURL, g.Room, g.AdminToken)
	session, err := GateCheck{RoomURL: g.RoomURL, Room: g.Room}.session(ctx)
	if err != nil {
		return nil, err
	}
	defer EndSession(context.Background(), http.DefaultClient, g.RoomURL, g.Room, apiKey, session)
	check := http.Header{"Cookie": {GateCookie + "=" + g.Room + "." + session}, "X-Waitingroom-Room": {g.Room}}
	type leg struct {
		name, url string
		hdr       http.Header
		want      int
	}
	legs := []leg{
		{LegHello, hello + "/", nil, http.StatusOK},
		{LegCheck, strings.TrimRight(g.RoomURL, "/") + "/gate/check", check, http.StatusNoContent},
	}
	var out []GateCheckLeg
	pooled := make([]GateCheckLeg, len(legs))
	for round := 1; round <= g.Rounds; round++ {
		for i, lg := range legs {
			l := Load{URL: lg.url, Method: http.MethodGet, Concurrency: g.Concurrency, Duration: g.Duration, Header: lg.hdr}
			warm := l
			warm.MaxRequests, warm.Duration = 50*g.Concurrency, min(g.Duration, 2*time.Second)
			if _, err := warm.Run(ctx); err != nil {
				return out, err
			}
			cpu0, busy0 := CPUTime(), readCPUStat()
			res, err := l.Run(ctx)
			if err != nil {
				return out, err
			}
			m := GateCheckLeg{Name: lg.name, Round: round, Result: res, ClientCPU: CPUTime() - cpu0, Busy: readCPUStat().busySince(busy0)}
			if err := CheckStatus("gatecheck "+lg.name, res.Status, res.Errors, []int{lg.want}, g.MaxUnexpected); err != nil {
				return out, err
			}
			out = append(out, m)
			p := &pooled[i]
			p.Name = lg.name
			p.Result.Requests += res.Requests
			p.Result.Errors += res.Errors
			p.Result.Elapsed += res.Elapsed
			p.Result.Latencies = append(p.Result.Latencies, res.Latencies...)
			p.ClientCPU += m.ClientCPU
			p.Busy += m.Busy / float64(g.Rounds)
			fmt.Fprintf(progress, "gatecheck: round %d %s done\n", round, lg.name)
		}
	}
	for i := range pooled {
		slices.Sort(pooled[i].Result.Latencies)
	}
	return append(out, pooled...), nil
}

// cpuStat is the machine's CPU time from /proc/stat's first line, in
// ticks: busy and all.
type cpuStat struct{ busy, total uint64 }

func readCPUStat() cpuStat {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuStat{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return cpuStat{}
	}
	var s cpuStat
	for i, v := range f[1:] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return cpuStat{}
		}
		s.total += n
		if i != 3 && i != 4 { // idle, iowait
			s.busy += n
		}
	}
	return s
}

// busySince returns the busy share of the CPU time between s0 and s; 0
// when either is unknown.
func (s cpuStat) busySince(s0 cpuStat) float64 {
	if s0.total == 0 || s.total <= s0.total {
		return 0
	}
	return float64(s.busy-s0.busy) / float64(s.total-s0.total)
}
