package queue

import (
	"context"
	"embed"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFS embed.FS

// script is one Lua script and the room keys it declares. Every script
// passes every key it touches in KEYS, so that Redis Cluster routes it and
// refuses it (ASK, TRYAGAIN) while its room's slot migrates, instead of
// letting it read or write a key that has moved.
type script struct {
	keys []string
	src  string // the script as sent to Redis
	sha  string // its SHA-1 digest, for EVALSHA
}

// scripts are loaded once per server by EVALSHA, falling back to EVAL when
// the server does not know the digest (see run).
type scripts struct {
	position, admit, leave, claim, release, consume, stats, createRoom, seen, snapshot *script
	orderBucket, orderRefund, soldOut, deleteRoom                                      *script
	// DRAW
	drawSeed, drawBegin, drawChunk, drawDone, drawYield *script
	// drawLines writes the chunks of a room with lines.
	drawLines *script
	// drawFence is sent by EVAL with its source, and takes no lib.
	drawFence *script
	// GATE
	mint, openSession, touchSession, endSession, activeSessions, setAPIKey *script
	// CHALLENGE
	challengeCount, waitSlot *script
	// ADAPT
	adapt *script
	// BYPASS
	bypass, addBypassLink *script
}

func loadScripts() scripts {
	lib := mustRead("lib")
	load := func(name string) *script {
		return parseScript(name, lib, mustRead(name))
	}
	return scripts{
		position:    load("position"),
		admit:       load("admit"),
		leave:       load("leave"),
		claim:       load("claim"),
		release:     load("release"),
		consume:     load("consume"),
		stats:       load("stats"),
		createRoom:  load("create_room"),
		seen:        load("seen"),
		snapshot:    load("snapshot"),
		orderBucket: load("order_bucket"),
		orderRefund: load("order_refund"),
		soldOut:     load("sold_out"),
		deleteRoom:  load("delete_room"),
		drawSeed:    load("draw_seed"),
		drawBegin:   load("draw_begin"),
		drawChunk:   load("draw_chunk"),
		drawLines:   load("draw_lines"),
		drawFence:   parseScript("draw_fence", "", mustRead("draw_fence")),
		drawDone:    load("draw_done"),
		drawYield:   load("draw_yield"),
		// GATE
		mint:           load("mint"),
		openSession:    load("open_session"),
		touchSession:   load("touch_session"),
		endSession:     load("end_session"),
		activeSessions: load("active_sessions"),
		setAPIKey:      load("set_apikey"),
		// CHALLENGE
		challengeCount: load("challenge_count"),
		waitSlot:       load("wait_slot"),
		// ADAPT
		adapt: load("adapt"),
		// BYPASS
		bypass:        load("bypass"),
		addBypassLink: load("add_bypass_link"),
	}
}

// parseScript reads the "-- KEYS: name ..." header that starts body and
// returns the script: a prelude that binds K.<name> to KEYS[i] (reading an
// undeclared name is an error) and takes the clock argument off ARGV, lib,
// then body. A name declared with a trailing "*" is one of lineKeyNames:
// the script gets every line's, K.<name> is line 0's, and useLine(i)
// (1-based, in the prelude) binds K.<name> to line i-1's.
func parseScript(name, lib, body string) *script {
	first, _, _ := strings.Cut(body, "\n")
	decl, ok := strings.CutPrefix(first, "-- KEYS:")
	if !ok {
		panic("queue: script " + name + " does not start with a -- KEYS: header")
	}
	s := &script{}
	var perLine []string
	for _, k := range strings.Fields(decl) {
		if base, ok := strings.CutSuffix(k, "*"); ok {
			if !lineKeyNames[base] {
				panic("queue: script " + name + " declares " + k + ", which is not a line's key")
			}
			perLine = append(perLine, base)
			for i := range maxLines {
				s.keys = append(s.keys, lineKey(i, base))
			}
			continue
		}
		if !keyNames[k] {
			panic("queue: script " + name + " declares unknown key " + k)
		}
		s.keys = append(s.keys, k)
	}
	var b strings.Builder
	b.WriteString("local K = setmetatable({")
	for i, k := range s.keys {
		if keyNames[k] {
			fmt.Fprintf(&b, "%s = KEYS[%d], ", k, i+1)
		}
	}
	fmt.Fprintf(&b, "}, {__index = function(_, k) error('%s.lua does not declare key ' .. tostring(k)) end})\n", name)
	b.WriteString("local LK = {")
	if len(perLine) > 0 {
		for i := range maxLines {
			b.WriteString("{")
			for j, k := range s.keys {
				if base, ok := strings.CutPrefix(k, lineKey(i, "")); ok && (i > 0 || keyNames[k]) && slices.Contains(perLine, base) {
					fmt.Fprintf(&b, "%s = KEYS[%d], ", base, j+1)
				}
			}
			b.WriteString("}, ")
		}
	}
	b.WriteString("}\n")
	b.WriteString("local function useLine(i) for k, v in pairs(LK[i]) do rawset(K, k, v) end end\n")
	// The call's last argument is the engine's clock (see clockArg); it is
	// taken off ARGV before the script reads its own arguments.
	b.WriteString("local CLOCK_US = tonumber(ARGV[#ARGV]); ARGV[#ARGV] = nil\n")
	b.WriteString(lib)
	b.WriteString("\n")
	b.WriteString(body)
	s.src = b.String()
	s.sha = redis.NewScript(s.src).Hash()
	return s
}

func mustRead(name string) string {
	src, err := luaFS.ReadFile("lua/" + name + ".lua")
	if err != nil {
		// The files are embedded at build time; a miss is a build defect.
		panic("queue: missing embedded script " + name)
	}
	return string(src)
}

// tryAgainWithin bounds how long run keeps retrying a script that Redis
// Cluster refused while its slot moved.
const tryAgainWithin = 2 * time.Second

// moving reports a refusal of Redis Cluster while a slot moves: TRYAGAIN
// (the keys are split between two nodes), or an ASK or MOVED redirection
// that go-redis had no redirections left to follow. Redis ran nothing, so
// the script may be sent again.
func moving(err error) bool {
	if redis.IsTryAgainError(err) {
		return true
	}
	_, ask := redis.IsAskError(err)
	_, moved := redis.IsMovedError(err)
	return ask || moved
}

// run runs script s for room with its declared keys, ARGV[1] = the room's
// events channel, then args, then the engine's clock (clockArg): by
// EVALSHA, and by EVAL when Redis does not know the script (after a
// restart or a SCRIPT FLUSH), which loads it.
//
// While a room's slot migrates between Cluster nodes, Redis refuses a
// script whose keys are not all on one side (TRYAGAIN) rather than run it
// on half a room, and redirects it (ASK, then MOVED); the window lasts as
// long as the migration, usually milliseconds. go-redis follows a few
// redirections; run starts over, with backoff, for up to tryAgainWithin,
// so that a migration does not turn into a burst of 503s.
func (e *Engine) run(ctx context.Context, s *script, room string, args ...any) *redis.Cmd {
	head := e.heads.get(e.ns, s, room)
	cmdArgs := make([]any, len(head), len(head)+len(args)+1)
	copy(cmdArgs, head)
	cmdArgs = append(cmdArgs, args...)
	cmdArgs = append(cmdArgs, e.clockArg())
	deadline := time.Now().Add(tryAgainWithin)
	for backoff := 10 * time.Millisecond; ; backoff = min(2*backoff, 200*time.Millisecond) {
		cmd := redis.NewCmd(ctx, cmdArgs...)
		_ = e.rdb.Process(ctx, cmd)
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			eval := slices.Clone(cmdArgs)
			eval[0], eval[1] = "eval", s.src
			cmd = redis.NewCmd(ctx, eval...)
			_ = e.rdb.Process(ctx, cmd)
		}
		if !moving(cmd.Err()) || time.Now().Add(backoff).After(deadline) {
			return cmd
		}
		select {
		case <-ctx.Done():
			return cmd
		case <-time.After(backoff):
		}
	}
}

// pipeline runs script s for room once for each of calls (its args, as
// run takes them), in order, in one round trip. It sends EVALSHA only: the
// script must be loaded, as a run of it just before makes sure. It returns
// each call's command and the first error of any.
func (e *Engine) pipeline(ctx context.Context, s *script, room string, calls [][]any) ([]*redis.Cmd, error) {
	head := e.heads.get(e.ns, s, room)
	clock := e.clockArg()
	pipe := e.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(calls))
	for i, args := range calls {
		a := make([]any, 0, len(head)+len(args)+1)
		a = append(append(append(a, head...), args...), clock)
		cmds[i] = redis.NewCmd(ctx, a...)
		_ = pipe.Process(ctx, cmds[i])
	}
	_, err := pipe.Exec(ctx)
	return cmds, err
}

// maxCallHeads bounds the call heads an Engine keeps: past it they are all
// dropped, so that calls for made-up room names cannot grow it.
const maxCallHeads = 4096

// callHeads keeps, per script and room, the head of its calls: "evalsha",
// the digest, the key count, the room's keys the script declares and
// ARGV[1] (the room's events channel), built and boxed once:
// building them at every call would be most of an enter's allocations.
type callHeads struct {
	mu sync.Mutex
	m  map[callHeadKey][]any
}

type callHeadKey struct {
	s    *script
	room string
}

// get returns the head of s's calls for room in namespace ns. The caller
// must not change it.
func (c *callHeads) get(ns string, s *script, room string) []any {
	k := callHeadKey{s, room}
	c.mu.Lock()
	head, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return head
	}
	rk := roomKeys(ns, room)
	head = make([]any, 0, 3+len(s.keys)+1)
	head = append(head, "evalsha", s.sha, len(s.keys))
	for _, name := range s.keys {
		head = append(head, rk.key(name))
	}
	head = append(head, rk.events)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCallHeads {
		c.m = make(map[callHeadKey][]any)
	}
	c.m[k] = head
	c.mu.Unlock()
	return head
}
