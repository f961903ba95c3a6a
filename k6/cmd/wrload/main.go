// Command wrload holds the waiting room's load and measurement tools: the
// loads, soaks and flash sales that BENCHMARKS.md quotes. It is a binary of
// its own so that the server, waitingroom, links none of it (plotting,
// PDF, LaTeX). Every load it drives is on loopback and bounded in time.
//
//	go run ./k6/cmd/wrload soak -n 15000 -hold 30s
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"waitingroom/k6"
)

// tool is one subcommand.
type tool struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// tools lists the subcommands, in the order the usage shows them.
func tools() []tool {
	return []tool{
		{"loadtest", "drive an HTTP load at a running server, or serve the hello-world ceiling", loadtestCommand},
		{"soak", "hold N waiting visitors over SSE (or polling) and measure what they cost", soakCommand},
		{"burst", "a flash sale: N buyers enter, wait, are let in and order", burstCommand},
		{"calibrate", "step the order rate, find the knee, recommend (and -apply) a rate", calibrateCommand},
		{"plot", "draw burst runs (their -json files) into a PNG", plotCommand},
		{"eta", "the estimated wait shown against the real wait: steady, with maxActive, after a rate change", etaCommand},
		{"redis-memory", "Redis bytes per waiting visitor, beside a bare ZSET entry", memoryCommand},
		{"sse-reference", "r3labs/sse with its defaults, the soak's reference server", referenceCommand},
		{"proxy", "the reverse proxy's overhead: one GET directly and through PROXY_ADDR, same run", proxyCommand},
		{"verify-draw", "check a room's pre-queue draw: its seed, commitment and order", verifyDrawCommand},
		{"natcrowd", "a crowd behind one address (carrier-grade NAT) joins a challenge room: who joined, the challenge's cost", natcrowdCommand},
		{"powbot", "a bot with all the CPU places identities in a room per challenge setting: identities per CPU-second", powbotCommand},
		{"drawshare", "a crowd and a bot through a pre-queue per challenge setting: the bot's share of the draw", drawshareCommand},
		{"adaptive", "adaptive admission against a knee shop whose capacity changes: converge, react, recover; beside calibrate's fixed rate", adaptiveCommand},
		{"gatecheck", "the gate check's cost: /gate/check direct, nginx auth_request beside unguarded, the reverse proxy", gatecheckCommand},
		{"rooms", "many rooms, some with a line, on M instances: Redis commands and CPU, server CPU and memory per room, admission per busy room", roomsCommand},
		{"idle", "hold an idle server on its embedded stores with N rooms; sample its CPU and RSS; judge them flat", idleCommand},
		{"hashrate", "headless Chromium's proof-of-work hash rate with the vendored ALTCHA solver", hashrateCommand},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stdout, os.Stderr))
}

// run dispatches to the tool named by args[0].
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return &usageError{err: errors.New("no tool named"), text: usage()}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		return &usageError{text: usage()}
	}
	for _, t := range tools() {
		if t.name == args[0] {
			return t.run(ctx, args[1:], stdout, stderr)
		}
	}
	return &usageError{err: fmt.Errorf("unknown tool %q", args[0]), text: fmt.Sprintf("unknown tool %q\n%s", args[0], usage())}
}

func usage() string {
	var b strings.Builder
	b.WriteString("usage: wrload <tool> [flags]\n\ntools:\n")
	for _, t := range tools() {
		fmt.Fprintf(&b, "  %-14s %s\n", t.name, t.summary)
	}
	b.WriteString("\nRun \"wrload <tool> -h\" for a tool's flags. Every load is on loopback and bounded in time.\n")
	return b.String()
}

// usageError is a request for help (err nil) or a command line that does
// not parse; text is the usage to print.
type usageError struct {
	err  error
	text string
}

func (e *usageError) Error() string {
	if e.err == nil {
		return "help requested"
	}
	return e.err.Error()
}

// exitCode prints what err calls for and returns the exit status: 0 and
// the usage on stdout for help, 2 and the usage on stderr for a bad command
// line, 1 for a failure.
func exitCode(err error, stdout, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue) && ue.err == nil:
		fmt.Fprint(stdout, ue.text)
		return 0
	case errors.As(err, &ue):
		fmt.Fprint(stderr, ue.text)
		return 2
	}
	fmt.Fprintf(stderr, "wrload: FAILED: %v\n", err)
	return 1
}

// progressFlag defines -progress, the interval of a long tool's progress
// lines on stderr; checkProgress refuses one longer than five seconds.
func progressFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("progress", k6.DefaultProgressEvery, "print a progress line on stderr this often (at most 5s)")
}

func checkProgress(name string, every time.Duration) error {
	if every <= 0 || every > k6.DefaultProgressEvery {
		return fmt.Errorf("%s: -progress %v out of (0, %v]", name, every, k6.DefaultProgressEvery)
	}
	return nil
}

// checkFlags defines -expect and -max-unexpected, the bound past which a
// benchmark fails because its answers were not what it measures.
func checkFlags(fs *flag.FlagSet, expect string) (statuses *string, maxUnexpected *float64) {
	if expect != "" {
		statuses = fs.String("expect", expect, "the HTTP statuses the run expects, comma-separated")
	}
	maxUnexpected = fs.Float64("max-unexpected", k6.MaxUnexpected,
		"fail when more than this share of the answers are not expected (1: never fail)")
	return statuses, maxUnexpected
}

// parseFlags parses a tool's command line. Help (-h, -help) and a bad flag
// come back as a *usageError holding the tool's usage, so that main, not
// the flag package, decides where it goes and how the process exits.
func parseFlags(fs *flag.FlagSet, args []string) error {
	var summary string
	for _, t := range tools() {
		if t.name == fs.Name() {
			summary = t.summary
		}
	}
	var out bytes.Buffer
	fs.SetOutput(&out)
	fs.Usage = func() {
		fmt.Fprintf(&out, "usage: wrload %s [flags]\n\n%s\n\nflags:\n", fs.Name(), summary)
		fs.PrintDefaults()
	}
	err := fs.Parse(args)
	switch {
	case err == nil && fs.NArg() > 0:
		fs.Usage()
		return &usageError{err: fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0)),
			text: fmt.Sprintf("unexpected argument %q\n%s", fs.Arg(0), out.String())}
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		return &usageError{text: out.String()}
	}
	return &usageError{err: fmt.Errorf("%s: %w", fs.Name(), err), text: out.String()}
}
