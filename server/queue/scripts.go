package queue

import (
	"embed"

	"github.com/redis/go-redis/v9"
)

//go:embed lua/*.lua
var luaFS embed.FS

// scripts are loaded once per server by EVALSHA, falling back to EVAL when
// the server does not know the digest (redis.Script.Run does both).
type scripts struct {
	position, admit, leave, claim, release, consume, stats, createRoom *redis.Script
}

func loadScripts() scripts {
	load := func(name string) *redis.Script {
		src, err := luaFS.ReadFile("lua/" + name + ".lua")
		if err != nil {
			// The files are embedded at build time; a miss is a build defect.
			panic("queue: missing embedded script " + name)
		}
		return redis.NewScript(string(src))
	}
	return scripts{
		position:   load("position"),
		admit:      load("admit"),
		leave:      load("leave"),
		claim:      load("claim"),
		release:    load("release"),
		consume:    load("consume"),
		stats:      load("stats"),
		createRoom: load("create_room"),
	}
}
