package queue

import (
	"context"
	"embed"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFS embed.FS

// scripts are loaded once per server by EVALSHA, falling back to EVAL when
// the server does not know the digest (redis.Script.Run does both). Each is
// lib.lua followed by the script's own body.
type scripts struct {
	position, admit, leave, claim, release, consume, stats, createRoom, seen, snapshot *redis.Script
	orderBucket, soldOut                                                               *redis.Script
}

func loadScripts() scripts {
	lib := mustRead("lib")
	load := func(name string) *redis.Script {
		return redis.NewScript(lib + "\n" + mustRead(name))
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
		soldOut:     load("sold_out"),
	}
}

func mustRead(name string) string {
	src, err := luaFS.ReadFile("lua/" + name + ".lua")
	if err != nil {
		// The files are embedded at build time; a miss is a build defect.
		panic("queue: missing embedded script " + name)
	}
	return string(src)
}

// run runs script s for room with ARGV[1] = the room's prefix, then args.
func (e *Engine) run(ctx context.Context, s *redis.Script, room string, args ...any) *redis.Cmd {
	keys, argv := roomKeys(room).run(args...)
	return s.Run(ctx, e.rdb, keys, argv...)
}
