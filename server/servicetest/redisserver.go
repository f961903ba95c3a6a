package servicetest

import (
	"bufio"
	"context"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisServer is a redis-server of a test's own, with AOF everysec, that
// the test can kill and start again on the same port and data.
type RedisServer struct {
	t    testing.TB
	port string
	dir  string
	cmd  *exec.Cmd
}

// StartRedisServer starts a redis-server on a free loopback port, killed
// when t ends; it skips, or fails in CI, without redis-server.
func StartRedisServer(t testing.TB) *RedisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		Missing(t, "redis-server (to get it: apt-get install redis-server)", err)
	}
	_, port, _ := net.SplitHostPort(FreeAddr(t))
	r := &RedisServer{t: t, port: port, dir: t.TempDir()}
	r.Start()
	t.Cleanup(func() {
		if r.cmd != nil {
			r.cmd.Process.Kill()
			r.cmd.Wait()
		}
	})
	return r
}

// URL is the server's URL, database 0.
func (r *RedisServer) URL() string { return "redis://127.0.0.1:" + r.port + "/0" }

// Addr is the server's address.
func (r *RedisServer) Addr() string { return "127.0.0.1:" + r.port }

// Start starts the server and returns once it serves commands: its AOF
// is loaded.
func (r *RedisServer) Start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server", "--port", r.port, "--bind", "127.0.0.1", "--dir", r.dir,
		"--appendonly", "yes", "--appendfsync", "everysec", "--save", "")
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("start redis-server: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		reply, err := r.ping()
		if err == nil && reply == "+PONG" {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server does not serve: %q %v", reply, err)
		}
	}
}

// ping sends PING on a connection of its own and returns the reply's
// first line: "+PONG", or an error reply such as LOADING while the AOF is
// read. A plain connection: the Redis client would log each refused dial.
func (r *RedisServer) ping() (string, error) {
	nc, err := net.DialTimeout("tcp", r.Addr(), time.Second)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(time.Second))
	if _, err := nc.Write([]byte("PING\r\n")); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(nc).ReadString('\n')
	return strings.TrimSpace(line), err
}

// Crash kills the server without a chance to save: only what it wrote to
// its AOF survives.
func (r *RedisServer) Crash() {
	r.cmd.Process.Signal(syscall.SIGKILL)
	r.cmd.Wait()
	r.cmd = nil
}

// WaitAOFWritten returns once every write the server acknowledged is in
// its AOF file: its AOF buffer is empty (INFO persistence). A process
// killed after that loses none of them (the file's pages are the
// system's, fsynced or not); with everysec a write can stay buffered while
// the previous second's fsync runs.
func (r *RedisServer) WaitAOFWritten() {
	r.t.Helper()
	c := redis.NewClient(&redis.Options{Addr: r.Addr()})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		info, err := c.Info(context.Background(), "persistence").Result()
		if err == nil && strings.Contains(info, "\r\naof_buffer_length:0\r\n") && strings.Contains(info, "\r\naof_last_write_status:ok\r\n") {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server's AOF buffer is not written: %v %s", err, info)
		}
	}
}
