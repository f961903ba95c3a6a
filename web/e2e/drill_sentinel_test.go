package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/queue"
	"waitingroom/server/servicetest"
)

func redisNode(t *testing.T, args ...string) (string, *exec.Cmd) {
	t.Helper()
	_, port, _ := net.SplitHostPort(freeAddr(t))
	cmd := exec.Command("redis-server", append([]string{"--port", port, "--bind", "127.0.0.1", "--dir", t.TempDir(), "--save", ""}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitPort(t, "127.0.0.1:"+port)
	return port, cmd
}

func waitPort(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start", addr)
		}
	}
}

// TestDrillSentinel: instances reach Redis through Sentinel; the master is
// SIGKILLed, Sentinel promotes the replica, and the room goes on with its
// line intact.
func TestDrillSentinel(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		servicetest.Missing(t, "redis-server (to get it: apt-get install redis-server)", err)
	}
	master, masterCmd := redisNode(t, "--repl-diskless-sync-delay", "0")
	replica, _ := redisNode(t, "--replicaof", "127.0.0.1", master)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		info, _ := exec.Command("redis-cli", "-p", replica, "info", "replication").Output()
		if strings.Contains(string(info), "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica never synced: %s", info)
		}
	}
	dir := t.TempDir()
	_, sport, _ := net.SplitHostPort(freeAddr(t))
	conf := filepath.Join(dir, "sentinel.conf")
	os.WriteFile(conf, []byte(strings.Join([]string{
		"port " + sport, "bind 127.0.0.1", "dir " + dir,
		"sentinel monitor wr 127.0.0.1 " + master + " 1",
		"sentinel down-after-milliseconds wr 1000",
		"sentinel failover-timeout wr 5000",
	}, "\n")+"\n"), 0o644)
	sentinel := exec.Command("redis-server", conf, "--sentinel")
	if err := sentinel.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sentinel.Process.Kill(); sentinel.Wait() })
	waitPort(t, "127.0.0.1:"+sport)
	time.Sleep(1500 * time.Millisecond) // the sentinel has seen master and replica

	d := newDrill(t, 2, "redis://127.0.0.1:"+master+"/0",
		"REDIS_URL=", "REDIS_SENTINEL_MASTER=wr", "REDIS_SENTINEL_ADDRS=127.0.0.1:"+sport)
	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "wr", SentinelAddrs: []string{"127.0.0.1:" + sport}})
	defer fc.Close()
	d.eng = queue.New(fc, queue.DefaultNamespace(fc))
	name := "sentinel"
	d.room(name, map[string]any{"rate": 1, "paused": true})
	if err := enterMany(context.Background(), d.url, name, 30, ""); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // replicated
	before := d.audit(name)

	masterCmd.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	var back time.Duration
	var last string
	for deadline := killed.Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Post(d.url+"/api/rooms/"+name+"/queue", "", nil)
		if err != nil {
			last = err.Error()
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = resp.Status + " " + string(b)
		if resp.StatusCode == 200 {
			back = time.Since(killed)
			break
		}
	}
	if back == 0 {
		out, _ := exec.Command("redis-cli", "-p", sport, "sentinel", "get-master-addr-by-name", "wr").CombinedOutput()
		t.Fatalf("enters did not come back within 30 s of the master's death; sentinel says master %q; last answer %s", out, last)
	}
	addr, _ := fc.Do(context.Background(), "PING").Result()
	after := d.audit(name)
	t.Logf("master SIGKILLed; Sentinel promoted the replica (:%s); enters answered again after %v; tickets %d before, %d after (%v)",
		replica, back.Round(time.Millisecond), before.Issued, after.Issued, addr)
	if after.Issued != before.Issued+1 {
		t.Fatalf("the line lost tickets in the failover: %d before, %d after one more enter", before.Issued, after.Issued)
	}
}
