package e2e

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"waitingroom/server/config"
	"waitingroom/server/servicetest"
)

// TestAdminAddUserThroughMain runs the real binary with the password
// piped on stdin, then signs that operator in to a server on the same
// database.
func TestAdminAddUserThroughMain(t *testing.T) {
	dbURL := servicetest.PostgresURL(t)
	cmd := exec.Command(os.Args[0], "admin", "add-user", "ops.lead")
	cmd.Env = append(os.Environ(), "WR_RUN_MAIN=1", "DATABASE_URL="+dbURL)
	cmd.Stdin = strings.NewReader("a long enough password\n")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "operator ops.lead added") {
		t.Fatalf("add-user: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "a long enough password") {
		t.Fatal("the password is echoed")
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]string{"-metrics-addr", "127.0.0.1:0"}, func(k string) string {
		if k == "DATABASE_URL" {
			return dbURL
		}
		return ""
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, ln, quietLog()) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	base := "http://" + ln.Addr().String()
	waitHealthy(t, base)
	c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tt := range []struct {
		password string
		want     int
	}{{"a wrong password!", 401}, {"a long enough password", 303}} {
		resp, err := c.PostForm(base+"/admin/signin", url.Values{"name": {"ops.lead"}, "password": {tt.password}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Fatalf("sign-in with %q: %d, want %d", tt.password, resp.StatusCode, tt.want)
		}
	}
}

// TestDemoPrintsAConsoleToken: `make run` (both stores embedded, no
// ADMIN_TOKEN) prints one line with a token for this run that opens the
// console; a token set by the operator is never printed.
func TestDemoPrintsAConsoleToken(t *testing.T) {
	for _, tt := range []struct {
		name  string
		token string
	}{{"no token", ""}, {"a token of its own", "operator-chosen-token-0123456789"}} {
		t.Run(tt.name, func(t *testing.T) {
			addr := freeAddr(t)
			pr, pw := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan struct{})
			go func() {
				defer close(stopped)
				err := run(ctx, []string{"-listen", addr, "-metrics-addr", "127.0.0.1:0", "-tick", "100ms"}, func(k string) string {
					if k == "ADMIN_TOKEN" {
						return tt.token
					}
					return ""
				}, pw, quietLog())
				if err != nil {
					t.Errorf("run: %v", err)
				}
				pw.Close()
			}()
			lines := make(chan string, 10)
			go func() {
				sc := bufio.NewScanner(pr)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			t.Cleanup(func() {
				cancel()
				<-stopped
			})
			base := "http://" + addr
			waitHealthy(t, base)
			token := tt.token
			if tt.token == "" {
				var line string
				select {
				case line = <-lines:
				case <-time.After(5 * time.Second):
					t.Fatal("no console line on stdout")
				}
				m := regexp.MustCompile(`^console: http://` + regexp.QuoteMeta(addr) + `/admin/signin — sign in with this run's demo token (\S{20,}) \(it works until the server stops\)$`).FindStringSubmatch(line)
				if m == nil {
					t.Fatalf("stdout line %q", line)
				}
				token = m[1]
			}
			c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			var resp *http.Response
			var err error
			// The embedded database migrates in the background.
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if resp, err = c.PostForm(base+"/admin/signin", url.Values{"token": {token}}); err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusServiceUnavailable {
					break
				}
			}
			if resp.StatusCode != 303 || len(resp.Cookies()) != 1 {
				t.Fatalf("sign-in with the token: %d", resp.StatusCode)
			}
			cancel()
			<-stopped
			for l := range lines {
				if strings.Contains(l, token) {
					t.Fatalf("the token was printed: %q", l)
				}
			}
		})
	}
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
	cmd := exec.Command(os.Args[0]) // TestMain runs the binary instead of the tests
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
