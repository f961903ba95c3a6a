package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	altcha "github.com/altcha-org/altcha-lib-go"

	"waitingroom/server/config"
	"waitingroom/server/servicetest"
	"waitingroom/web/app"
)

// TestMain lets a test re-execute this binary as the real server: with
// WR_RUN_MAIN=1 it runs the waitingroom binary's main instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("WR_RUN_MAIN") == "1" {
		os.Exit(runMain())
	}
	code := m.Run()
	shared.stop()
	os.Exit(code)
}

// runMain is the root main.go: the waitingroom binary, with the assets
// read from the repository instead of embedded. It returns the exit code.
func runMain() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	err := app.Main(ctx, repoAssets(), os.Args[1:], os.Getenv, os.Stdin, os.Stdout, log)
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp): // -h: the usage is printed
	default:
		log.Error("waitingroom: fatal", "err", err)
		return 1
	}
	return 0
}

// repoRoot is the repository's root, where static/, migrations/, docs/
// and k6/ are: the tests run in web/e2e.
const repoRoot = "../.."

// repoAssets are the repository's static/ and migrations/, which the
// binary embeds.
func repoAssets() app.Assets {
	root := os.DirFS(repoRoot)
	return app.Assets{Static: root, Migrations: root}
}

// serve runs the server on ln until ctx is done (app.Serve).
func serve(ctx context.Context, cfg config.Config, ln net.Listener, log *slog.Logger) error {
	return app.Serve(ctx, cfg, repoAssets(), ln, log)
}

// run runs the binary's command line in this process (app.Main).
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer, log *slog.Logger) error {
	return app.Main(ctx, repoAssets(), args, getenv, os.Stdin, stdout, log)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	return servicetest.FreeAddr(t)
}

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never became healthy", base)
}

type position struct {
	Status     string  `json:"status"`
	Rank       int64   `json:"rank"`
	EntryToken *string `json:"entryToken"`
}

// solvedChallenge gets a challenge of room from base and returns its
// solution as the X-Altcha header carries it.
func solvedChallenge(t *testing.T, c *http.Client, base, room string) string {
	t.Helper()
	resp, err := c.Get(base + "/api/rooms/" + room + "/challenge")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ch altcha.Challenge
	if err := json.NewDecoder(resp.Body).Decode(&ch); err != nil || resp.StatusCode != 200 {
		t.Fatalf("challenge of %s: %d %v", room, resp.StatusCode, err)
	}
	s, err := altcha.SolveChallenge(ch.Challenge, ch.Salt, altcha.Algorithm(ch.Algorithm), int(ch.MaxNumber), 0, nil)
	if err != nil || s == nil {
		t.Fatalf("solve %+v: %v", ch, err)
	}
	b, _ := json.Marshal(altcha.Payload{Algorithm: ch.Algorithm, Challenge: ch.Challenge, Number: int64(s.Number), Salt: ch.Salt, Signature: ch.Signature})
	return base64.StdEncoding.EncodeToString(b)
}

func getPosition(t *testing.T, c *http.Client, method, url string) position {
	t.Helper()
	return doPosition(t, c, method, url, nil)
}

// doPosition is getPosition with request headers.
func doPosition(t *testing.T, c *http.Client, method, url string, hdr http.Header) position {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p position
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

// syncBuffer collects a server's logs from several goroutines.
type syncBuffer = servicetest.SyncBuffer

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
