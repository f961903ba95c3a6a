package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"waitingroom/k6"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/visitor"
)

// startCluster runs a 3-master Redis Cluster on loopback and returns its
// go-redis cluster URL.
func startCluster(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		servicetest.Missing(t, "redis-cli (to get it: apt-get install redis-server)", err)
	}
	var addrs []string
	for range 3 {
		_, port, _ := net.SplitHostPort(freeAddr(t))
		dir := t.TempDir()
		cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--dir", dir,
			"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--appendonly", "no", "--save", "")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		addrs = append(addrs, "127.0.0.1:"+port)
	}
	for _, a := range addrs {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if c, err := net.Dial("tcp", a); err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("cluster node %s did not start", a)
			}
		}
	}
	out, err := exec.Command("redis-cli", append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		info, _ := exec.Command("redis-cli", "-h", "127.0.0.1", "-p", strings.Split(addrs[0], ":")[1], "cluster", "info").Output()
		if strings.Contains(string(info), "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster never became ok: %s", info)
		}
	}
	return "redis://" + addrs[0] + "?addr=" + addrs[1] + "&addr=" + addrs[2]
}

// TestDrillRedisCluster runs the core's flows on a 3-master Redis Cluster
// (every script on one node thanks to the {room} hash tag, rooms spread
// over the masters), then a small sale through two instances behind nginx.
func TestDrillRedisCluster(t *testing.T) {
	url := startCluster(t)
	rdb := servicetest.RedisAt(t, url)
	eng := queue.New(rdb)
	ctx := context.Background()

	// Rooms whose names hash to different slots.
	rooms := []string{"cluster-a", "cluster-b", "cluster-c", "cluster-d"}
	for _, name := range rooms {
		set := room.Defaults(name)
		set.Rate, set.AbandonAfterSeconds = 1000, 60
		if err := eng.SaveRoom(ctx, name, set); err != nil {
			t.Fatal(err)
		}
		eng.Admit(ctx, name, time.Second, nil)
	}
	for _, name := range rooms {
		var vs []string
		for range 20 {
			v, _ := visitor.NewID()
			if _, err := eng.Enter(ctx, name, v); err != nil {
				t.Fatalf("enter on the cluster: %v", err)
			}
			vs = append(vs, v)
		}
		if _, err := eng.Leave(ctx, name, vs[3]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		toks := make([]string, 10)
		for i := range toks {
			toks[i] = fmt.Sprintf("%042dA", i)
		}
		a, err := eng.Admit(ctx, name, 10*time.Millisecond, toks)
		if err != nil || len(a.Visitors) == 0 {
			t.Fatalf("admit on the cluster: %+v %v", a, err)
		}
		p, _ := eng.Position(ctx, name, a.Visitors[0])
		if p.EntryToken == nil {
			t.Fatal("no token on the cluster")
		}
		if err := eng.Claim(ctx, name, a.Visitors[0], *p.EntryToken, time.Second); err != nil {
			t.Fatal(err)
		}
		if err := eng.Consume(ctx, name, a.Visitors[0], *p.EntryToken); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.TakeOrderSlot(ctx, name); err != nil {
			t.Fatal(err)
		}
		if err := eng.MarkSeen(ctx, name, []int64{1, 2}); err != nil {
			t.Fatal(err)
		}
		snap, err := eng.Snapshot(ctx, name)
		if err != nil || snap.Tick == 0 {
			t.Fatalf("snapshot on the cluster: %+v %v", snap, err)
		}
		st, _ := eng.Stats(ctx, name)
		if st.Waiting+st.Admitted+st.Left != st.Issued || st.Consumed != 1 || st.Left != 1 {
			t.Fatalf("stats on the cluster: %+v", st)
		}
	}
	names, err := eng.Rooms(ctx)
	if err != nil || len(names) != len(rooms) {
		t.Fatalf("rooms on the cluster: %v %v", names, err)
	}

	// The core's own integration tests, unchanged, against the cluster (the
	// smoke leaves out the 10 s global-rate run with -short).
	args := []string{"test", "-count=1", "./server/queue/", "./server/order/", "./server/issuer/"}
	if !*drillFull {
		args = append(args, "-short")
	}
	gotest := exec.Command("go", args...)
	gotest.Env = append(os.Environ(), "REDIS_TEST_URL="+url, "CI=true")
	if out, err := gotest.CombinedOutput(); err != nil {
		t.Fatalf("the core's tests on the cluster: %v\n%s", err, out)
	} else {
		t.Logf("the core's tests on the cluster:\n%s", out)
	}

	// A small sale through nginx: pushes (pattern subscription) and orders.
	d := newDrill(t, 2, url)
	d.room("cluster-sale", map[string]any{"rate": 20})
	time.Sleep(1500 * time.Millisecond) // migrations
	addProductAt(t, d.dbURL, "cluster-sale", 30)
	rep, err := k6.Burst{URLs: []string{d.url}, Room: "cluster-sale", N: 40, Within: time.Second,
		Timeout: time.Minute, SourceIPs: 4}.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := k6.Summarise(rep)
	t.Logf("on a 3-master Redis Cluster: %s", strings.ReplaceAll(s.String(), "\n", "; "))
	if s.Ordered != 30 || s.Admitted < 30 {
		t.Fatalf("sale on the cluster: %+v; want 30 orders for 30 items", s)
	}
	d.audit("cluster-sale")
}
