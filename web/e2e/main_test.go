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
	"net/http/cookiejar"
	"os"
	"os/exec"
	"os/signal"
	"strings"
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
	os.Exit(m.Run())
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

// TestEmbeddedDemo is `make run` on a machine with only Go: no REDIS_URL,
// so the server runs on the embedded Redis, serves the demo room, which
// asks a proof of work (the binary's CHALLENGE_DEFAULT is auto), admits
// its visitor and shuts down cleanly when its context ends (SIGTERM).
func TestEmbeddedDemo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const admin = "embedded-admin-token-0123456789abc"
	cfg, err := config.Parse([]string{"-tick", "50ms", "-admin-token", admin, "-metrics-addr", "127.0.0.1:0"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, ln, slog.New(slog.NewTextHandler(&logs, nil))) }()
	base := "http://" + ln.Addr().String()
	waitHealthy(t, base)
	if !strings.Contains(logs.String(), "EMBEDDED") {
		t.Fatalf("the embedded Redis was not logged loudly:\n%s", logs.String())
	}

	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 5 * time.Second}
	refused, err := c.Post(base+"/api/rooms/demo/queue", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	refused.Body.Close()
	if refused.StatusCode != http.StatusPreconditionRequired {
		t.Fatalf("enter the demo room without a proof of work: %d, want 428", refused.StatusCode)
	}
	p := doPosition(t, c, "POST", base+"/api/rooms/demo/queue", http.Header{"X-Altcha": {solvedChallenge(t, c, base, "demo")}})
	if p.Status != "WAITING" && p.Status != "READY" {
		t.Fatalf("enter the demo room: %+v", p)
	}
	// The issuer runs on the embedded Redis too: the visitor gets in.
	deadline := time.Now().Add(5 * time.Second)
	for p.Status != "READY" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		p = getPosition(t, c, "GET", base+"/api/rooms/demo/queue/position")
	}
	if p.Status != "READY" || p.EntryToken == nil {
		t.Fatalf("never admitted on the embedded Redis: %+v", p)
	}

	req, _ := http.NewRequest("GET", base+"/api/admin/rooms/demo", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"admitted":1`) {
		t.Fatalf("admin view of the demo room: %d %s", resp.StatusCode, body)
	}

	// The embedded SQL store takes the demo order (demo mode seeds the
	// demo product once the migrations are applied).
	var placed *http.Response
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		req, _ = http.NewRequest("POST", base+"/api/rooms/demo/orders", strings.NewReader(`{"quantity":1}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Entry-Token", *p.EntryToken)
		if placed, err = c.Do(req); err != nil {
			t.Fatal(err)
		}
		placed.Body.Close()
		if placed.StatusCode != http.StatusServiceUnavailable { // migrations still running
			break
		}
	}
	if placed.StatusCode != http.StatusCreated {
		t.Fatalf("demo order on the embedded store: %d", placed.StatusCode)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("graceful shutdown returned %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the server did not shut down")
	}
}

// TestSIGTERM runs the real binary and stops it with SIGTERM.
func TestSIGTERM(t *testing.T) {
	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0]) // TestMain runs main() instead of the tests
	cmd.Env = append(os.Environ(), "WR_RUN_MAIN=1", "LISTEN_ADDR="+addr, "REDIS_URL=", "TICK=100ms", "METRICS_ADDR=127.0.0.1:0")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	waitHealthy(t, "http://"+addr)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, out.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("no exit within 15 s of SIGTERM\n%s", out.String())
	}
	if !strings.Contains(out.String(), "shutting down") {
		t.Fatalf("no graceful shutdown logged:\n%s", out.String())
	}
}

// syncBuffer collects a server's logs from several goroutines.
type syncBuffer = servicetest.SyncBuffer

// TestHelpExitsZero: "waitingroom serve -h" prints the flags and exits 0,
// without a fatal log line.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"serve", "-help"}, {"migrate", "-h"}} {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "WR_RUN_MAIN=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "-listen") || strings.Contains(string(out), "fatal") {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
