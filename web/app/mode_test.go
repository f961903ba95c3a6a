package app

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"waitingroom/server/config"
	"waitingroom/server/queue"
	"waitingroom/server/room"
	"waitingroom/server/servicetest"
	"waitingroom/server/store"
)

// serveUntilReady runs serve with env until the test ends, and waits until it
// is ready (migrated, rooms restored). It returns the base URL and the
// server's log.
func serveUntilReady(t *testing.T, env map[string]string) (string, *syncBuffer) {
	t.Helper()
	cfg, err := config.Parse([]string{"-tick", "100ms"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, cfg, repoAssets(), ln, slog.New(slog.NewTextHandler(&logs, nil))) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	base := "http://" + ln.Addr().String()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base, &logs
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("never ready:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func demoProducts(t *testing.T, base string) (int, []map[string]any) {
	t.Helper()
	resp, err := http.Get(base + "/api/rooms/demo/products")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ps []map[string]any
	json.NewDecoder(resp.Body).Decode(&ps)
	return resp.StatusCode, ps
}

// TestProductionModeHasNoDemo: with its own Redis and database, the server
// creates no demo room and the migrations seed no product; DEMO=1 brings
// the demo room and exactly one product, however often it starts.
func TestProductionModeHasNoDemo(t *testing.T) {
	// A database of its own: servers of other tests create their rooms
	// (older builds, the demo room too) in servicetest.ServerDB.
	redisURL := servicetest.RedisURLDB(t, 9)
	rdb := servicetest.RedisAt(t, redisURL)
	servicetest.DropRoom(rdb, room.Demo)
	t.Cleanup(func() { servicetest.DropRoom(rdb, room.Demo) })
	eng := queue.New(rdb, queue.DefaultNamespace(rdb))
	dbURL := servicetest.PostgresURL(t)
	ctx := context.Background()
	db, err := store.Open(ctx, dbURL, 1, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	products := func() int {
		var n int
		if err := db.Get(&n, `SELECT COUNT(*) FROM products`); err != nil {
			t.Fatal(err)
		}
		return n
	}
	env := map[string]string{"REDIS_URL": redisURL, "DATABASE_URL": dbURL}

	t.Run("production", func(t *testing.T) {
		base, logs := serveUntilReady(t, env)
		if _, err := eng.Room(ctx, room.Demo); !errors.Is(err, room.ErrNotFound) {
			t.Fatalf("a production server created the demo room: %v", err)
		}
		if n := products(); n != 0 {
			t.Fatalf("a production database holds %d products", n)
		}
		if status, _ := demoProducts(t, base); status != 404 {
			t.Fatalf("demo products on a production server: %d", status)
		}
		if !strings.Contains(logs.String(), "PRODUCTION MODE") || strings.Contains(logs.String(), "/r/demo") {
			t.Fatalf("the mode was not logged clearly:\n%s", logs.String())
		}
	})
	env["DEMO"] = "1"
	for _, run := range []string{"demo", "demo restarted"} {
		t.Run(run, func(t *testing.T) {
			base, logs := serveUntilReady(t, env)
			if _, err := eng.Room(ctx, room.Demo); err != nil {
				t.Fatalf("DEMO=1 did not create the demo room: %v", err)
			}
			var ps []map[string]any
			for deadline := time.Now().Add(5 * time.Second); len(ps) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				_, ps = demoProducts(t, base)
			}
			if len(ps) != 1 || ps[0]["name"] != demoProduct().Name || ps[0]["currency"] != "KRW" || products() != 1 {
				t.Fatalf("demo products %v, %d in the database; want one", ps, products())
			}
			if !strings.Contains(logs.String(), "DEMO MODE") || !strings.Contains(logs.String(), `why="DEMO=1"`) {
				t.Fatalf("the mode was not logged clearly:\n%s", logs.String())
			}
		})
	}
}

// TestEmbeddedStoresAreADemo: `make run` with nothing configured sells the
// demo product.
func TestEmbeddedStoresAreADemo(t *testing.T) {
	base, logs := serveUntilReady(t, map[string]string{})
	var ps []map[string]any
	for deadline := time.Now().Add(5 * time.Second); len(ps) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		_, ps = demoProducts(t, base)
	}
	if len(ps) != 1 || ps[0]["stock"] != 1000.0 {
		t.Fatalf("demo products on the embedded stores: %v", ps)
	}
	if !strings.Contains(logs.String(), "why=\"both stores are embedded\"") {
		t.Fatalf("the mode was not logged clearly:\n%s", logs.String())
	}
	// The demo room has a proper title and shop, and the front page lists it.
	for path, want := range map[string]string{
		"/r/demo": `<meta property="og:site_name" content="Seoul Sneaker Lab">`,
		"/":       `<a href="/r/demo">Limited drop: Air Runner 1 “Seoul Night”</a>`,
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("%s: %d, lacks %s:\n%s", path, resp.StatusCode, want, b)
		}
	}
}
