package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"waitingroom/k6"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/visitor"
)

// roomsCommand creates N rooms in a Redis of its own, B of them with a
// line kept at L, starts M server instances on it, and reports over a hold
// what they cost: Redis commands and CPU, and each instance's CPU and
// memory, per room; and how exactly each busy room admitted at its rate.
func roomsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rooms", flag.ContinueOnError)
	bin := fs.String("bin", "bin/waitingroom", "the server binary")
	redisURL := fs.String("redis-url", "", "a Redis server of this run's own: it is flushed (required)")
	instances := fs.Int("instances", 1, "server instances")
	rooms := fs.Int("rooms", 1000, "rooms to create")
	busy := fs.Int("busy", 0, "rooms among them with a line")
	line := fs.Int("line", 10, "each busy room's line, topped up every 250 ms")
	rate := fs.Float64("rate", 5, "each room's admission rate, per second")
	hold := fs.Duration("hold", 30*time.Second, "how long to measure")
	warmup := fs.Duration("warmup", 15*time.Second, "how long to run before the hold")
	port := fs.Int("port", 18700, "the first instance's port (each takes three from there)")
	logPath := fs.String("log", "", "the instances' log (default: discarded)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *redisURL == "":
		return errors.New("rooms: -redis-url is required (a Redis of the run's own: it is flushed)")
	case *instances < 1 || *instances > 10:
		return errors.New("rooms: -instances out of 1..10")
	case *rooms < 1 || *rooms > 20000:
		return errors.New("rooms: -rooms out of 1..20000")
	case *busy < 0 || *busy > *rooms:
		return errors.New("rooms: -busy out of 0..rooms")
	case *line < 1 || *line > 1000:
		return errors.New("rooms: -line out of 1..1000")
	case *rate < room.MinRate || *rate > 100:
		return fmt.Errorf("rooms: -rate out of %v..100", room.MinRate)
	case *hold < 5*time.Second || *hold > time.Hour || *warmup < 0 || *warmup > 10*time.Minute:
		return errors.New("rooms: -hold out of 5s..1h, or -warmup out of 0..10m")
	case *port < 1024 || *port+3**instances > 65535:
		return errors.New("rooms: -port out of range")
	}
	opt, err := redis.ParseURL(*redisURL)
	if err != nil {
		return fmt.Errorf("rooms: -redis-url: %w", err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	if err := rdb.FlushDB(ctx).Err(); err != nil {
		return fmt.Errorf("rooms: flush: %w", err)
	}
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	names := make([]string, *rooms)
	for i := range names {
		names[i] = fmt.Sprintf("r%05d", i+1)
		s := room.Defaults(names[i])
		s.Rate = *rate
		if err := eng.SaveRoom(ctx, names[i], s); err != nil {
			return fmt.Errorf("rooms: %w", err)
		}
	}
	busyRooms := names[:*busy]
	// topUp brings every busy room's line back to -line, 16 rooms at a
	// time: one after another, 100 rooms took longer than their lines
	// last.
	topUp := func() error {
		var g errgroup.Group
		g.SetLimit(16)
		for _, name := range busyRooms {
			g.Go(func() error {
				st, err := eng.Stats(ctx, name)
				if err != nil {
					return fmt.Errorf("rooms: %w", err)
				}
				for range int64(*line) - st.Waiting {
					v, err := visitor.NewID()
					if err != nil {
						return err
					}
					if _, err := eng.Enter(ctx, name, v); err != nil {
						return fmt.Errorf("rooms: enter %s: %w", name, err)
					}
				}
				return nil
			})
		}
		return g.Wait()
	}
	if err := topUp(); err != nil {
		return err
	}

	var logOut io.Writer = io.Discard
	if *logPath != "" {
		f, err := os.Create(*logPath)
		if err != nil {
			return fmt.Errorf("rooms: %w", err)
		}
		defer f.Close()
		logOut = f
	}
	var pids []int
	var metricsURLs []string
	for i := range *instances {
		p := *port + 3*i
		metricsURLs = append(metricsURLs, "http://127.0.0.1:"+strconv.Itoa(p+1)+"/metrics")
		srv, err := serveProcess(*bin, []string{"REDIS_URL=" + *redisURL, "DATABASE_URL=",
			"LISTEN_ADDR=127.0.0.1:" + strconv.Itoa(p), "METRICS_ADDR=127.0.0.1:" + strconv.Itoa(p+1), "DEBUG_ADDR=",
			"ADMIN_TOKEN=rooms-admin-token-0123456789abcdef0123", "SECRET_KEY=rooms-secret-key-0123456789abcdef"}, logOut)
		if err != nil {
			return fmt.Errorf("rooms: %w", err)
		}
		defer srv.stop()
		if err := waitHealthy(ctx, "http://127.0.0.1:"+strconv.Itoa(p)+"/healthz", srv.exited); err != nil {
			return fmt.Errorf("rooms: instance %d: %w", i+1, err)
		}
		pids = append(pids, srv.cmd.Process.Pid)
	}
	fmt.Fprintf(stdout, "== rooms: %d rooms, %d with a line of %d, rate %v/s, %d instances of %s, warm-up %v, hold %v, %s, %d cores\n",
		*rooms, *busy, *line, *rate, *instances, *bin, *warmup, *hold, time.Now().UTC().Format(time.RFC3339), runtime.NumCPU())

	// keepUp tops the busy rooms' lines up every 250 ms until d is over.
	keepUp := func(d time.Duration) error {
		end := time.Now().Add(d)
		for time.Now().Before(end) {
			if err := topUp(); err != nil {
				return err
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(min(250*time.Millisecond, time.Until(end))):
			}
		}
		return nil
	}
	if err := keepUp(*warmup); err != nil {
		return err
	}
	admitted0, err := admittedIn(ctx, eng, busyRooms)
	if err != nil {
		return err
	}
	r0, err := redisCounters(ctx, rdb)
	if err != nil {
		return err
	}
	u0, err := usages(pids)
	if err != nil {
		return err
	}
	sent0, ticks0, err := sentBy(ctx, metricsURLs)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := keepUp(*hold); err != nil {
		return err
	}
	held := time.Since(start)
	r1, err := redisCounters(ctx, rdb)
	if err != nil {
		return err
	}
	u1, err := usages(pids)
	if err != nil {
		return err
	}
	admitted1, err := admittedIn(ctx, eng, busyRooms)
	if err != nil {
		return err
	}
	sent1, ticks1, err := sentBy(ctx, metricsURLs)
	if err != nil {
		return err
	}
	c := k6.CostOf(held, r0, r1, u0, u1)
	c.SentPerSec = (sent1 - sent0) / held.Seconds()
	c.TicksPerSec = (ticks1 - ticks0) / held.Seconds()
	c.Rooms, c.Busy, c.Expected = *rooms, *busy, *rate*held.Seconds()
	for i := range busyRooms {
		c.Admitted = append(c.Admitted, admitted1[i]-admitted0[i])
	}
	fmt.Fprint(stdout, c)
	return nil
}

// redisCounters reads rdb's command calls and CPU time.
func redisCounters(ctx context.Context, rdb *redis.Client) (k6.RedisCounters, error) {
	stats, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return k6.RedisCounters{}, fmt.Errorf("rooms: INFO commandstats: %w", err)
	}
	cpu, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return k6.RedisCounters{}, fmt.Errorf("rooms: INFO cpu: %w", err)
	}
	return k6.ParseRedisCounters(stats, cpu)
}

// usages reads each process's CPU time and resident set.
func usages(pids []int) ([]k6.ProcUsage, error) {
	out := make([]k6.ProcUsage, len(pids))
	for i, pid := range pids {
		u, err := k6.ReadProcUsage(pid)
		if err != nil {
			return nil, fmt.Errorf("rooms: %w", err)
		}
		out[i] = u
	}
	return out, nil
}

// admittedIn returns each room's admissions so far.
func admittedIn(ctx context.Context, eng *queue.Engine, names []string) ([]int64, error) {
	out := make([]int64, len(names))
	for i, name := range names {
		st, err := eng.Stats(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("rooms: %w", err)
		}
		out[i] = st.Admitted
	}
	return out, nil
}

// sentBy sums the Redis commands the instances say they sent, and the
// admission ticks they ran.
func sentBy(ctx context.Context, urls []string) (sent, ticks float64, err error) {
	for _, u := range urls {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, 0, fmt.Errorf("rooms: metrics: %w", err)
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return 0, 0, fmt.Errorf("rooms: metrics %s: %d %v", u, resp.StatusCode, err)
		}
		sent += k6.SumMetric(string(b), "waitingroom_redis_commands_total")
		ticks += k6.SumMetric(string(b), "waitingroom_issuer_tick_duration_seconds_count")
	}
	return sent, ticks, nil
}
