package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
// over the masters), then a small sale through two instances behind nginx
// while the room's slot migrates; the full drill also runs the core's
// packages' tests against the cluster.
func TestDrillRedisCluster(t *testing.T) {
	url := startCluster(t)
	rdb := servicetest.RedisAt(t, url)
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
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
		c, err := eng.Claim(ctx, name, a.Visitors[0], *p.EntryToken, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := eng.Consume(ctx, name, a.Visitors[0], c.Holder); err != nil {
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
		if st.Unaccounted() != 0 || st.Consumed != 1 || st.Leaves != 1 || st.Left != 1 {
			t.Fatalf("stats on the cluster: %+v", st)
		}
	}
	names, err := eng.Rooms(ctx)
	if err != nil || len(names) != len(rooms) {
		t.Fatalf("rooms on the cluster: %v %v", names, err)
	}

	// The core's own integration tests, unchanged, against the cluster:
	// the full drill only (make drill), since they build and run three
	// packages' tests, a minute or more on 2 cores.
	if *drillFull {
		gotest := exec.Command("go", "test", "-count=1", "./server/queue/", "./server/order/", "./server/issuer/")
		gotest.Dir = repoRoot
		gotest.Env = append(os.Environ(), "REDIS_TEST_URL="+url, "CI=true")
		if out, err := gotest.CombinedOutput(); err != nil {
			t.Fatalf("the core's tests on the cluster: %v\n%s", err, out)
		} else {
			t.Logf("the core's tests on the cluster:\n%s", out)
		}
	}

	// A small sale through nginx: pushes (pattern subscription) and orders.
	// Meanwhile the room's slot migrates to another master and back, in
	// small batches of keys, so that the room is half moved for a while:
	// every script declares all its keys, so Redis refuses (TRYAGAIN) what
	// it would otherwise run against half a room, and the engine retries.
	const sale = "cluster-sale"
	d := newDrill(t, 2, url)
	d.room(sale, map[string]any{"rate": 10})
	addProductAt(t, d.dbURL, sale, 30)
	stop := make(chan struct{})
	var polls, failed atomic.Int64
	var pollers sync.WaitGroup
	for range 4 {
		pollers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Get(d.url + "/api/rooms/" + sale + "/queue/position")
				polls.Add(1)
				if err != nil {
					failed.Add(1)
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					if failed.Add(1) <= 5 {
						t.Logf("a poll during the migrations: %d %s", resp.StatusCode, body)
					}
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	moves := make(chan string, 1)
	go func() {
		time.Sleep(800 * time.Millisecond) // the sale is under way
		there := migrateSlot(t, url, "{"+sale+"}", "")
		time.Sleep(800 * time.Millisecond)
		back := migrateSlot(t, url, "{"+sale+"}", there.from)
		moves <- there.String() + "; " + back.String()
	}()
	rep, err := k6.Burst{URLs: []string{d.url}, Room: sale, N: 60, Within: time.Second,
		Timeout: time.Minute, SourceIPs: 4}.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	moved := <-moves
	close(stop)
	pollers.Wait()
	s := k6.Summarise(rep)
	t.Logf("on a 3-master Redis Cluster: %s", strings.ReplaceAll(s.String(), "\n", "; "))
	t.Logf("slot migrations during the sale: %s; %d of %d position polls failed", moved, failed.Load(), polls.Load())
	if s.Ordered != 30 || s.Admitted < 30 {
		t.Fatalf("sale on the cluster: %+v; want 30 orders for 30 items", s)
	}
	if bad := s.Status[http.StatusServiceUnavailable] + s.Status[599]; bad > 0 {
		t.Fatalf("%d buyers ended on an error during the migrations: %v", bad, s.Status)
	}
	if failed.Load() > polls.Load()/100 {
		for _, in := range d.instances {
			for _, line := range strings.Split(in.logs.String(), "\n") {
				if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
					t.Logf("instance %s: %s", in.addr, line)
				}
			}
		}
		t.Fatalf("%d of %d position polls failed during the migrations: a 503 storm", failed.Load(), polls.Load())
	}
	st := d.audit(sale)
	if st.Consumed != 30 || st.Issued > int64(s.Buyers) {
		t.Fatalf("after the migrations: %+v; want 30 consumed passes and a ticket per buyer at most", st)
	}
}

// migration is one slot move.
type migration struct {
	slot     int64
	from, to string
	keys     int
	took     time.Duration
}

func (m migration) String() string {
	return fmt.Sprintf("slot %d moved %s -> %s (%d keys, %v)", m.slot, m.from, m.to, m.keys, m.took.Round(time.Millisecond))
}

// migrateSlot moves the slot of hashTag to the master at to (any other
// master when empty), the way redis-cli --cluster reshard does: SETSLOT
// IMPORTING and MIGRATING, MIGRATE of the keys in batches, SETSLOT NODE.
// Batches of 3 keys with a pause between them leave the room half moved
// for a while, as a reshard of a busy slot does.
func migrateSlot(t *testing.T, clusterURL, hashTag, to string) migration {
	ctx := context.Background()
	opt, err := redis.ParseClusterURL(clusterURL)
	if err != nil {
		t.Error(err)
		return migration{}
	}
	nodes := map[string]*redis.Client{}
	ids := map[string]string{}
	for _, a := range opt.Addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		defer c.Close()
		nodes[a] = c
		ids[a], _ = c.Do(ctx, "CLUSTER", "MYID").Text()
	}
	first := nodes[opt.Addrs[0]]
	slot, err := first.ClusterKeySlot(ctx, hashTag).Result()
	if err != nil {
		t.Error(err)
		return migration{}
	}
	slots, _ := first.ClusterSlots(ctx).Result()
	m := migration{slot: slot}
	for _, s := range slots {
		if int64(s.Start) <= slot && slot <= int64(s.End) {
			m.from = s.Nodes[0].Addr
		}
	}
	for _, a := range opt.Addrs {
		if m.to == "" && a != m.from && (to == "" || a == to) {
			m.to = a
		}
	}
	src, dst := nodes[m.from], nodes[m.to]
	if src == nil || dst == nil {
		t.Errorf("slot %d: no source (%q) or target (%q)", slot, m.from, m.to)
		return m
	}
	start := time.Now()
	steps := []error{
		dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", ids[m.from]).Err(),
		src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", ids[m.to]).Err(),
	}
	host, port, _ := net.SplitHostPort(m.to)
	for {
		keys, err := src.ClusterGetKeysInSlot(ctx, int(slot), 3).Result()
		if err != nil || len(keys) == 0 {
			steps = append(steps, err)
			break
		}
		args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		steps = append(steps, src.Do(ctx, args...).Err())
		m.keys += len(keys)
		time.Sleep(30 * time.Millisecond)
	}
	steps = append(steps, dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", ids[m.to]).Err(),
		src.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", ids[m.to]).Err())
	for a, c := range nodes {
		if a != m.from && a != m.to {
			steps = append(steps, c.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", ids[m.to]).Err())
		}
	}
	m.took = time.Since(start)
	if err := errors.Join(steps...); err != nil {
		t.Errorf("migrating slot %d: %v", slot, err)
	}
	return m
}
