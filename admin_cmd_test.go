package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
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
	"waitingroom/server/operator"
	"waitingroom/server/servicetest"
	"waitingroom/server/store"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestAdminUsers adds, lists and removes operators in a real PostgreSQL,
// and refuses what it must.
func TestAdminUsers(t *testing.T) {
	dbURL := servicetest.PostgresURL(t)
	env := func(k string) string {
		if k == "DATABASE_URL" {
			return dbURL
		}
		return ""
	}
	admin := func(stdin string, args ...string) (string, error) {
		var out strings.Builder
		err := adminCommand(context.Background(), args, env, strings.NewReader(stdin), &out, quietLog())
		return out.String(), err
	}
	for _, tt := range []struct {
		name    string
		stdin   string
		args    []string
		out     string
		wantErr string
	}{
		{"add", "correct horse battery\n", []string{"add-user", "alice"}, "operator alice added\n", ""},
		{"add without a newline, CRLF", "another fine password\r\n", []string{"add-user", "bob"}, "operator bob added\n", ""},
		{"add twice", "correct horse battery\n", []string{"add-user", "alice"}, "", "already exists"},
		{"short password", "short\n", []string{"add-user", "carol"}, "", "at least 12"},
		{"long password", strings.Repeat("x", 300) + "\n", []string{"add-user", "carol"}, "", "at most 256"},
		{"no password", "", []string{"add-user", "carol"}, "", "no password on stdin"},
		{"bad name", "correct horse battery\n", []string{"add-user", "Carol!"}, "", "a-z"},
		{"reserved name", "correct horse battery\n", []string{"add-user", "admin"}, "", "admin"},
		{"no name", "", []string{"add-user"}, "", "takes 1 argument"},
		{"list", "", []string{"list-users"}, "alice\nbob\n", ""},
		{"remove", "", []string{"remove-user", "bob"}, "operator bob removed\n", ""},
		{"remove again", "", []string{"remove-user", "bob"}, "", "no such operator"},
		{"list after", "", []string{"list-users"}, "alice\n", ""},
		{"unknown", "", []string{"frob"}, "", "unknown command"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := admin(tt.stdin, tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || out != tt.out {
				t.Fatalf("out %q, %v; want %q", out, err, tt.out)
			}
		})
	}
	// The stored password signs alice in; no one else was added.
	db, err := store.Open(context.Background(), dbURL, 2, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ops, _ := operator.New(db)
	if err := ops.Authenticate(context.Background(), "alice", "correct horse battery"); err != nil {
		t.Fatalf("alice: %v", err)
	}
	if names, _ := ops.List(context.Background()); len(names) != 1 {
		t.Fatalf("operators %v", names)
	}
}

// TestAdminRefusesTheEmbeddedStore: without DATABASE_URL there is nothing
// to add an operator to, and it says why.
func TestAdminRefusesTheEmbeddedStore(t *testing.T) {
	for _, args := range [][]string{{"add-user", "alice"}, {"list-users"}} {
		err := run(context.Background(), append([]string{"admin"}, args...), func(string) string { return "" }, io.Discard, quietLog())
		if err == nil || !strings.Contains(err.Error(), "DATABASE_URL is empty") || !strings.Contains(err.Error(), "in-memory") {
			t.Fatalf("%v: %v", args, err)
		}
	}
}

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
