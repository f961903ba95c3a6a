package queue

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"waitingroom/server/room"
	"waitingroom/server/servicetest"
)

// TestScriptsDeclareEveryKey reads every script, with the lib.lua
// functions it calls, and checks that each key it touches is declared in
// its header: on Redis Cluster an undeclared key is read or written behind
// the slot's back while the room's slot migrates. No script may build a
// key name itself.
func TestScriptsDeclareEveryKey(t *testing.T) {
	comment := regexp.MustCompile(`--[^\n]*`)
	lib := comment.ReplaceAllString(mustRead("lib"), "")
	keyRef := regexp.MustCompile(`\bK\.(\w+)`)
	funcDef := regexp.MustCompile(`(?m)^local function (\w+)\(`)
	// Each lib function's body: from its definition to the next one.
	bodies := map[string]string{}
	defs := funcDef.FindAllStringSubmatchIndex(lib, -1)
	for i, d := range defs {
		end := len(lib)
		if i+1 < len(defs) {
			end = defs[i+1][0]
		}
		bodies[lib[d[2]:d[3]]] = lib[d[0]:end]
	}
	// uses returns the keys src touches, through the lib functions it calls.
	var uses func(src string, seen map[string]bool) []string
	uses = func(src string, seen map[string]bool) []string {
		var out []string
		for _, m := range keyRef.FindAllStringSubmatch(src, -1) {
			out = append(out, m[1])
		}
		for name, body := range bodies {
			if !seen[name] && regexp.MustCompile(`\b`+name+`\(`).MatchString(src) {
				seen[name] = true
				out = append(out, uses(body, seen)...)
			}
		}
		return out
	}
	entries, err := luaFS.ReadDir("lua")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range entries {
		name := strings.TrimSuffix(f.Name(), ".lua")
		src := mustRead(name)
		for _, bad := range []string{"KEYS[", "ARGV[1]"} {
			if strings.Contains(src, bad) && !(name == "lib" && bad == "ARGV[1]") {
				t.Errorf("%s.lua uses %s: keys come from its header only", name, bad)
			}
		}
		if name == "lib" {
			continue
		}
		declared := parseScript(name, lib, src).keys
		body := comment.ReplaceAllString(src, "")
		// A script that moves between lines (useLine, directly or through
		// lib) reads each line's keys: it declares them with "*".
		seen := map[string]bool{}
		touched := uses(body, seen)
		movesLines := strings.Contains(body, "useLine(")
		for fn := range seen {
			movesLines = movesLines || strings.Contains(bodies[fn], "useLine(")
		}
		for _, k := range touched {
			if !slices.Contains(declared, k) {
				t.Errorf("%s.lua touches key %s without declaring it", name, k)
			}
			if movesLines && lineKeyNames[k] && !slices.Contains(declared, lineKey(1, k)) {
				t.Errorf("%s.lua moves between lines and touches %s, declared without *", name, k)
			}
		}
	}
}

// TestUndeclaredKeyIsAnError: reading a key a script did not declare fails
// the script, so a missing declaration shows up in any test that runs it.
func TestUndeclaredKeyIsAnError(t *testing.T) {
	rdb := servicetest.Redis(t)
	e := New(rdb, DefaultNamespace(rdb))
	probe := parseScript("probe", mustRead("lib"), "-- KEYS: cfg\nreturn redis.call('GET', K.seq)")
	err := e.run(context.Background(), probe, "probe").Err()
	if err == nil || !strings.Contains(err.Error(), "probe.lua does not declare key seq") {
		t.Fatalf("undeclared key: %v", err)
	}
}

// TestScriptsRunAfterAFlush: a script Redis no longer knows (a restart, a
// SCRIPT FLUSH) is sent whole (EVAL) and runs, and the calls after it go
// by digest again.
func TestScriptsRunAfterAFlush(t *testing.T) {
	mini := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mini.Addr()})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	e := New(rdb, DefaultNamespace(rdb))
	if err := e.SaveRoom(ctx, "flush", room.Defaults("flush")); err != nil {
		t.Fatal(err)
	}
	for i, v := range visitors(t, 3) {
		if i == 1 {
			if err := rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if ok, err := rdb.ScriptExists(ctx, e.s.position.sha).Result(); err != nil || ok[0] {
				t.Fatalf("the position script outlived the flush: %v %v", ok, err)
			}
		}
		if p, err := e.Enter(ctx, "flush", v); err != nil || p.Ticket != int64(i+1) {
			t.Fatalf("enter %d: %+v %v", i, p, err)
		}
	}
	if ok, err := rdb.ScriptExists(ctx, e.s.position.sha).Result(); err != nil || !ok[0] {
		t.Fatalf("the position script is not loaded again: %v %v", ok, err)
	}
}

// TestCallHeadsAreBounded: calls for ever new room names keep at most
// maxCallHeads heads, and a head is the script's call for its room.
func TestCallHeadsAreBounded(t *testing.T) {
	var c callHeads
	s := parseScript("probe", mustRead("lib"), "-- KEYS: cfg seq\nreturn 1")
	for i := range maxCallHeads + 10 {
		c.get("wr", s, "room-"+strconv.Itoa(i))
		if len(c.m) > maxCallHeads {
			t.Fatalf("%d heads kept after %d rooms", len(c.m), i+1)
		}
	}
	head := c.get("wr", s, "demo")
	want := []any{"evalsha", s.sha, 2, "wr:{demo}:cfg", "wr:{demo}:seq", "wr:{demo}:events"}
	if fmt.Sprint(head) != fmt.Sprint(want) {
		t.Fatalf("head %v, want %v", head, want)
	}
}
