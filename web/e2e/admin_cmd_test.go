package e2e

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
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
