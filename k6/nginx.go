package k6

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// placeholder matches a config template's blanks: @@NAME@@.
var placeholder = regexp.MustCompile(`@@[A-Z_]+@@`)

// Nginx is an nginx process run from one of docs/'s config templates, as
// the drills and benchmarks run it: the file as it ships, only its
// placeholders filled.
type Nginx struct {
	// Dir holds the filled config, the pid file, the logs and nginx's
	// scratch directories.
	Dir string
	cmd *exec.Cmd
}

// StartNginx fills template's placeholders from vars (names without the
// at-signs; TEMP_DIR is dir), starts nginx in the foreground and waits
// until it accepts connections on vars["LISTEN"]. Every placeholder must be
// filled.
func StartNginx(ctx context.Context, template, dir string, vars map[string]string) (*Nginx, error) {
	tmpl, err := os.ReadFile(template)
	if err != nil {
		return nil, fmt.Errorf("nginx: %w", err)
	}
	for _, sub := range []string{"body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("nginx: %w", err)
		}
	}
	pairs := []string{"@@TEMP_DIR@@", dir}
	for k, v := range vars {
		pairs = append(pairs, "@@"+k+"@@", v)
	}
	conf := strings.NewReplacer(pairs...).Replace(string(tmpl))
	if left := placeholder.FindString(conf); left != "" {
		return nil, fmt.Errorf("nginx: %s has a placeholder %s that is not filled", template, left)
	}
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, fmt.Errorf("nginx: %w", err)
	}
	out, err := os.Create(filepath.Join(dir, "stderr.log"))
	if err != nil {
		return nil, fmt.Errorf("nginx: %w", err)
	}
	defer out.Close()
	n := &Nginx{Dir: dir}
	global := "daemon off;"
	if os.Geteuid() == 0 {
		global += " user root;"
	}
	n.cmd = exec.Command("nginx", "-c", path, "-g", global)
	n.cmd.Stdout, n.cmd.Stderr = out, out
	if err := n.cmd.Start(); err != nil {
		return nil, fmt.Errorf("nginx: start: %w", err)
	}
	listen := vars["LISTEN"]
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", listen, time.Second)
		if err == nil {
			c.Close()
			return n, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			n.Stop()
			return nil, fmt.Errorf("nginx: not listening on %s: %s", listen, n.ErrorLog())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ErrorLog returns what nginx wrote to its stderr and error log so far.
func (n *Nginx) ErrorLog() string {
	out, _ := os.ReadFile(filepath.Join(n.Dir, "stderr.log"))
	errs, _ := os.ReadFile(filepath.Join(n.Dir, "error.log"))
	return string(out) + string(errs)
}

// AccessLog returns nginx's access log so far (empty when the config
// keeps none in Dir).
func (n *Nginx) AccessLog() string {
	b, _ := os.ReadFile(filepath.Join(n.Dir, "access.log"))
	return string(b)
}

// Stop shuts nginx down gracefully (SIGQUIT) and waits for it.
func (n *Nginx) Stop() error {
	if n.cmd.ProcessState != nil {
		return nil
	}
	if err := n.cmd.Process.Signal(syscall.SIGQUIT); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("nginx: stop: %w", err)
	}
	n.cmd.Wait()
	return nil
}
