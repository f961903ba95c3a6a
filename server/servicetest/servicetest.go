// Package servicetest connects tests to the real services they need: Redis
// and, later, PostgreSQL. A missing service skips the test with a clear
// message on a developer's machine and fails it in CI (CI=true).
package servicetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/lib/pq" // PostgreSQL, for PostgresURL
	"github.com/redis/go-redis/v9"
)

// DefaultRedisURL is the Redis that tests use unless REDIS_TEST_URL is set.
const DefaultRedisURL = "redis://127.0.0.1:6379/0"

// InCI reports whether the tests run in CI, where a missing service is a
// failure rather than a reason to skip.
func InCI() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// Missing skips t, or fails it in CI, because a service is unavailable.
func Missing(t testing.TB, service string, err error) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s is required in CI but unavailable: %v", service, err)
	}
	t.Skipf("skipping: %s is unavailable: %v (CI=true makes this a failure)", service, err)
}

// RedisURL returns the URL of the test Redis.
func RedisURL() string {
	if u := os.Getenv("REDIS_TEST_URL"); u != "" {
		return u
	}
	return DefaultRedisURL
}

// ServerDB is the Redis database of tests that run whole servers: their
// issuers tick every room of their database, so they must not share one
// with tests that count admissions.
const ServerDB = 1

// ToolsDB is the Redis database of the load tools' tests (k6/cmd/wrload):
// they run whole servers too, at the same time as web/e2e's.
const ToolsDB = 2

// RedisURLDB returns the test Redis URL with database db. A Redis Cluster
// has database 0 only: its URL (with addr= parameters) comes back as it is,
// so that the Cluster drill can run the same tests.
func RedisURLDB(t testing.TB, db int) string {
	t.Helper()
	if strings.Contains(RedisURL(), "addr=") {
		return RedisURL()
	}
	opt, err := redis.ParseURL(RedisURL())
	if err != nil {
		t.Fatalf("REDIS_TEST_URL: %v", err)
	}
	return fmt.Sprintf("redis://%s/%d", opt.Addr, db)
}

// Redis returns a client of the real test Redis, closed when t ends.
func Redis(t testing.TB) redis.UniversalClient {
	t.Helper()
	return RedisAt(t, RedisURL())
}

// RedisAt returns a client of the Redis at url, closed when t ends; a URL
// with addr= parameters is a Redis Cluster.
func RedisAt(t testing.TB, url string) redis.UniversalClient {
	t.Helper()
	var c redis.UniversalClient
	if strings.Contains(url, "addr=") {
		opt, err := redis.ParseClusterURL(url)
		if err != nil {
			t.Fatalf("cluster URL: %v", err)
		}
		opt.PoolSize = 64
		c = redis.NewClusterClient(opt)
	} else {
		opt, err := redis.ParseURL(url)
		if err != nil {
			t.Fatalf("REDIS_TEST_URL: %v", err)
		}
		opt.PoolSize = 64
		c = redis.NewClient(opt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		Missing(t, "Redis at "+url+" (to get it: apt-get install redis-server, then redis-server --daemonize yes; or set REDIS_TEST_URL)", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// RoomName returns a room name unique to this test run, and removes every
// key of that room when t ends, so that tests can share one Redis database.
func RoomName(t testing.TB, rdb redis.UniversalClient) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "t-" + hex.EncodeToString(b[:])
	t.Cleanup(func() { DropRoom(rdb, name) })
	return name
}

// DropRoom deletes every key of room name, in whatever deployment
// namespace, and takes it out of every namespace's room list.
func DropRoom(rdb redis.UniversalClient, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lists := rdb.ScanType(ctx, 0, "*:rooms", 1000, "set").Iterator()
	for lists.Next(ctx) {
		rdb.SRem(ctx, lists.Val(), name)
	}
	iter := rdb.Scan(ctx, 0, "*:{"+name+"}:*", 1000).Iterator()
	var batch []string
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			rdb.Del(ctx, batch...)
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		rdb.Del(ctx, batch...)
	}
}

// Chromium returns the path of Debian's chromium (or $CHROME_PATH), for
// browser tests; it skips, or fails in CI, when there is none.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("CHROME_PATH"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	Missing(t, "Chromium (to get it: apt-get install chromium fonts-noto-cjk; or set CHROME_PATH)", os.ErrNotExist)
	return ""
}

// ArtifactDir returns a folder for test artifacts such as screenshots:
// $ARTIFACTS_DIR, or artifacts/ at the module root.
func ArtifactDir(t testing.TB, name string) string {
	t.Helper()
	base := os.Getenv("ARTIFACTS_DIR")
	if base == "" {
		dir, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := os.Stat(dir + "/go.mod"); err == nil {
				break
			}
			parent := dir[:max(strings.LastIndex(dir, "/"), 0)]
			if parent == "" || parent == dir {
				break
			}
			dir = parent
		}
		base = dir + "/artifacts"
	}
	out := base + "/" + name
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// DefaultPostgresURL is the PostgreSQL that tests use unless
// POSTGRES_TEST_URL is set.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// PostgresURL returns a URL of the test PostgreSQL whose search_path is a
// fresh schema of its own, dropped when t ends, so that tests can share
// one database.
func PostgresURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("POSTGRES_TEST_URL")
	if base == "" {
		base = DefaultPostgresURL
	}
	db, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatalf("POSTGRES_TEST_URL: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		Missing(t, "PostgreSQL at "+base+" (to get it: apt-get install postgresql, then pg_ctlcluster <version> main start, "+
			"with trust for postgres on 127.0.0.1 and a database test; or set POSTGRES_TEST_URL)", err)
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		db.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		db.Exec("DROP SCHEMA " + schema + " CASCADE")
		db.Close()
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

// FreeAddr returns a loopback address that was free a moment ago, for a
// server that a test starts.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// SyncBuffer is a buffer that several goroutines may write at once, such
// as a server process's stdout and stderr.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
