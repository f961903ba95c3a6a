package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/servicetest"
)

// TestMain lets a test re-execute this binary as the real command (the
// soak's and the burst's child processes).
func TestMain(m *testing.M) {
	if os.Getenv("WR_RUN_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// testNamespace returns the Redis namespace of t's servers: one of its
// own, shared by the servers t starts and no other test's, since the
// servers of a namespace share its rooms' ticks. Its keys are deleted
// when t ends.
func testNamespace(t *testing.T, rdb redis.UniversalClient) string {
	t.Helper()
	sum := sha256.Sum256([]byte(t.Name()))
	ns := fmt.Sprintf("wr:t%d-%x", os.Getpid(), sum[:6])
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, ns+":*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Unlink(ctx, iter.Val())
		}
	})
	return ns
}

// testAdmin is the admin token of the servers the tests start.
const testAdmin = "wrload-test-admin-token-0123456789abcdef"

// server is a waitingroom process started for a test.
type server struct {
	base    string // http://127.0.0.1:port
	metrics string // its /metrics URL
	dbURL   string // its order database
	ns      string // its Redis namespace
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// serverBinary builds the waitingroom server once per test run: the tools
// are measured against the real binary, as the scripts run it.
func serverBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wrload-test-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "waitingroom")
		out, err := exec.Command("go", "build", "-o", binPath, "waitingroom").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build waitingroom: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// startServer runs the waitingroom server on the test Redis (the database
// of the tools' tests), in the test's own namespace (testNamespace), and a
// fresh PostgreSQL schema, with per-IP limits high enough for a load from
// a few loopback addresses and rooms created without a proof of work
// (CHALLENGE_DEFAULT=off); env adds to its environment, and overrides it.
func startServer(t *testing.T, tick time.Duration, env ...string) server {
	t.Helper()
	redisURL := servicetest.RedisURLDB(t, servicetest.ToolsDB)
	rdb := servicetest.RedisAt(t, redisURL)
	s := server{dbURL: servicetest.PostgresURL(t), ns: testNamespace(t, rdb)}
	for _, e := range env {
		if ns, ok := strings.CutPrefix(e, "REDIS_NAMESPACE="); ok {
			s.ns = ns
		}
	}
	bin := serverBinary(t)
	addr, metricsAddr := servicetest.FreeAddr(t), servicetest.FreeAddr(t)
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "LISTEN_ADDR="+addr, "METRICS_ADDR="+metricsAddr, "REDIS_URL="+redisURL,
		"DATABASE_URL="+s.dbURL, "SECRET_KEY=wrload-test-secret-key-0123456789", "ADMIN_TOKEN="+testAdmin,
		"SSE_MAX_PER_IP=100000", "ENTER_RATE_PER_IP=100000", "CHALLENGE_DEFAULT=off", "TICK="+tick.String(),
		"REDIS_NAMESPACE="+s.ns)
	cmd.Env = append(cmd.Env, env...)
	var logs servicetest.SyncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("server logs:\n%s", logs.String())
		}
	})
	s.base = "http://" + addr
	waitOK(t, s.base+"/healthz", &logs)
	// The metrics have a listener of their own where the server has
	// METRICS_ADDR, and are on the public port where it has not.
	s.metrics = "http://" + metricsAddr + "/metrics"
	if resp, err := http.Get(s.metrics); err == nil {
		resp.Body.Close()
	} else {
		s.metrics = s.base + "/metrics"
	}
	return s
}

func waitOK(t *testing.T, url string, logs *servicetest.SyncBuffer) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("%s never answered 200:\n%s", url, logs.String())
}

// addProduct puts a product in room once the server's migrations have run.
func (s server) addProduct(t *testing.T, room, name string, price, stock int64) {
	t.Helper()
	db, err := sqlx.Open("postgres", s.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, err = db.Exec(`INSERT INTO products (room, name, price, stock) VALUES ($1, $2, $3, $4)`, room, name, price, stock)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err) // the migrations never ran
		}
	}
}

// TestHelpAndBadFlags: every tool's -h and -help print its usage on stdout
// and exit 0; a flag it does not know exits 2 with the usage on stderr.
// Neither is reported as a failure.
func TestHelpAndBadFlags(t *testing.T) {
	type want struct {
		code           int
		stdout, stderr string
	}
	cases := map[string]want{
		"":           {2, "", "usage: wrload <tool>"},
		"-h":         {0, "usage: wrload <tool>", ""},
		"help":       {0, "usage: wrload <tool>", ""},
		"frobnicate": {2, "", `unknown tool "frobnicate"`},
	}
	for _, tl := range tools() {
		cases[tl.name+" -h"] = want{0, "usage: wrload " + tl.name + " [flags]", ""}
		cases[tl.name+" -help"] = want{0, "usage: wrload " + tl.name + " [flags]", ""}
		cases[tl.name+" -no-such-flag"] = want{2, "", "flag provided but not defined: -no-such-flag\nusage: wrload " + tl.name}
		cases[tl.name+" -h stray"] = want{0, "usage: wrload " + tl.name, ""}
	}
	for line, w := range cases {
		t.Run(line, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := exitCode(run(context.Background(), strings.Fields(line), &stdout, &stderr), &stdout, &stderr)
			if code != w.code || (w.stdout == "") != (stdout.Len() == 0) || !strings.Contains(stdout.String(), w.stdout) ||
				!strings.Contains(stderr.String(), w.stderr) || (w.stderr == "" && stderr.Len() > 0) {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, w.code, stdout.String(), stderr.String())
			}
			if strings.Contains(stderr.String(), "FAILED") {
				t.Fatalf("a usage question was reported as a failure:\n%s", stderr.String())
			}
		})
	}
}

// TestExitStatus runs the real command: the exit status a script sees.
func TestExitStatus(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"soak", "-h"}, 0, "-hold duration", ""},
		{[]string{"burst", "-help"}, 0, "-passthrough", ""},
		{[]string{"soak", "-bogus"}, 2, "", "flag provided but not defined: -bogus"},
		{[]string{"loadtest"}, 1, "", "wrload: FAILED: loadtest: -url is required"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], tt.args...)
			cmd.Env = append(os.Environ(), "WR_RUN_MAIN=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) ||
				(tt.stderr == "" && stderr.Len() > 0) {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout.String(), stderr.String())
			}
		})
	}
}
