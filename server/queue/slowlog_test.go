package queue

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// slowlogFrom makes Redis log every call of threshold or more, in a log of
// maxLen entries emptied now, and puts both settings back when tb ends.
// SLOWLOG belongs to the whole server: a test that reads it sets it, rather
// than trust the default threshold (10 ms) that any deployment may change.
func slowlogFrom(tb testing.TB, rdb redis.UniversalClient, threshold time.Duration, maxLen int) {
	tb.Helper()
	ctx := context.Background()
	set := map[string]string{
		"slowlog-log-slower-than": strconv.FormatInt(threshold.Microseconds(), 10),
		"slowlog-max-len":         strconv.Itoa(maxLen),
	}
	for param, v := range set {
		old, err := rdb.ConfigGet(ctx, param).Result()
		if err != nil || old[param] == "" {
			tb.Fatalf("slowlog: config get %s: %v %v", param, old, err)
		}
		if err := rdb.ConfigSet(ctx, param, v).Err(); err != nil {
			tb.Fatalf("slowlog: config set %s %s: %v", param, v, err)
		}
		tb.Cleanup(func() {
			if err := rdb.ConfigSet(context.Background(), param, old[param]).Err(); err != nil {
				tb.Errorf("slowlog: restore %s %s: %v", param, old[param], err)
			}
		})
	}
	if err := rdb.Do(ctx, "SLOWLOG", "RESET").Err(); err != nil {
		tb.Fatalf("slowlog: reset: %v", err)
	}
}

// roomSlowlog returns the SLOWLOG entries of room name's calls.
func roomSlowlog(tb testing.TB, rdb redis.UniversalClient, name string, maxLen int) []redis.SlowLog {
	tb.Helper()
	logs, err := rdb.SlowLogGet(context.Background(), int64(maxLen)).Result()
	if err != nil {
		tb.Fatalf("slowlog: get: %v", err)
	}
	var out []redis.SlowLog
	for _, l := range logs {
		if containsRoom(l.Args, name) {
			out = append(out, l)
		}
	}
	return out
}

func containsRoom(args []string, name string) bool {
	for _, a := range args {
		if len(a) < 200 && strings.Contains(a, "{"+name+"}") {
			return true
		}
	}
	return false
}
