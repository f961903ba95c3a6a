package queue

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"waitingroom/server/servicetest"
)

// TestWriteFenced: a fenced chunk goes into the line only when its check
// passes: the lease is the caller's, the draw is not done, the chunk starts
// at the progress, nobody has withdrawn and no ticket has a campaign, and
// the check itself ran. Otherwise nothing of it reaches the line or the
// progress, and the refusal is counted in the draw's hash.
func TestWriteFenced(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		start   int
		spoil   func(t *testing.T, rdb redis.UniversalClient, k keys)
		written int  // chunks writeFenced reports written
		err     bool // it reports an error
	}{
		{"passes", 0, nil, 1, false},
		{"the lease is another's", 0, func(t *testing.T, rdb redis.UniversalClient, k keys) {
			must(t, rdb.Set(ctx, k.key("drawlease"), "other", 0).Err())
		}, 0, false},
		{"the lease ran out", 0, func(t *testing.T, rdb redis.UniversalClient, k keys) {
			must(t, rdb.Del(ctx, k.key("drawlease")).Err())
		}, 0, false},
		{"the draw is done", 0, func(t *testing.T, rdb redis.UniversalClient, k keys) {
			must(t, rdb.HSet(ctx, k.key("draw"), "state", "done").Err())
		}, 0, false},
		{"past the progress", 3, nil, 0, false},
		{"a buyer withdrew", 0, func(t *testing.T, rdb redis.UniversalClient, k keys) {
			must(t, rdb.ZAdd(ctx, k.key("withdrawn"), redis.Z{Score: 4, Member: "gone"}).Err())
		}, 0, false},
		{"a ticket has a campaign", 0, func(t *testing.T, rdb redis.UniversalClient, k keys) {
			must(t, rdb.Set(ctx, k.key("camp"), "\x00\x00\x00\x01", 0).Err())
		}, 0, false},
		{"the room is deleted", 0, func(t *testing.T, rdb redis.UniversalClient, k keys) {
			must(t, rdb.Del(ctx, k.key("draw"), k.key("drawlease")).Err())
		}, 0, false},
		{"the check fails", 0, func(t *testing.T, rdb redis.UniversalClient, k keys) {
			must(t, rdb.Del(ctx, k.key("seenbase")).Err())
			must(t, rdb.RPush(ctx, k.key("seenbase"), "not a string").Err())
		}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, name, rdb := drawBegun(t, 10)
			k := testKeys(rdb, name)
			base, _ := rdb.HGet(ctx, k.key("draw"), "base").Int64()
			if tc.spoil != nil {
				tc.spoil(t, rdb, k)
			}
			order := []int{6, 2, 9}
			vs := []string{"v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9"}
			tickets := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
			call := chunkArgs("me", 5000, base, tc.start, order, vs, tickets)
			var after []int
			n, err := e.writeFenced(ctx, name, [][]any{call}, func(w int, fenced bool) {
				if !fenced {
					t.Error("a fenced chunk reported as draw_chunk.lua's")
				}
				after = append(after, w)
			})
			if (err != nil) != tc.err || n != tc.written {
				t.Fatalf("writeFenced: %d written, %v; want %d, error %v", n, err, tc.written, tc.err)
			}
			line, _ := rdb.ZRangeWithScores(ctx, k.key("queue"), 0, -1).Result()
			progress, _ := rdb.HGet(ctx, k.key("draw"), "written").Int()
			refusals, _ := rdb.HGet(ctx, k.key("draw"), "fenced").Int()
			if tc.name == "the room is deleted" {
				if n, _ := rdb.Exists(ctx, k.key("draw")).Result(); n != 0 || len(line) != 0 {
					t.Fatalf("a deleted room's draw hash is back (%d), line %v", n, line)
				}
				return
			}
			if tc.written == 0 {
				if len(line) != 0 || progress != 0 || len(after) != 0 || refusals != 1 {
					t.Fatalf("refused: the line holds %v, progress %d, reported %v, %d refusals; want nothing and 1",
						line, progress, after, refusals)
				}
				return
			}
			want := []redis.Z{{Score: float64(base + 1), Member: "v6"}, {Score: float64(base + 2), Member: "v2"}, {Score: float64(base + 3), Member: "v9"}}
			if !slices.Equal(line, want) || progress != 3 || !slices.Equal(after, []int{3}) || refusals != 0 {
				t.Fatalf("the line holds %v, progress %d, reported %v, %d refusals; want %v, 3, [3], 0",
					line, progress, after, refusals, want)
			}
			drawn, _ := rdb.GetRange(ctx, k.key("drawn"), 0, 11).Result()
			if drawn != string(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 7), 3), 10)) {
				t.Fatalf("drawn list %q, want tickets 7, 3, 10", drawn)
			}
		})
	}
}

// TestWriteFencedStopsAtARefusal: in one pipeline of three chunks, the
// second starts past the first's end; it and the third, which starts at
// its end, are refused: the progress stays where the first left it.
func TestWriteFencedStopsAtARefusal(t *testing.T) {
	ctx := context.Background()
	e, name, rdb := drawBegun(t, 10)
	k := testKeys(rdb, name)
	base, _ := rdb.HGet(ctx, k.key("draw"), "base").Int64()
	vs := []string{"v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9"}
	tickets := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	order := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	calls := [][]any{
		chunkArgs("me", 5000, base, 0, order[0:3], vs, tickets),
		chunkArgs("me", 5000, base, 5, order[5:8], vs, tickets),
		chunkArgs("me", 5000, base, 8, order[8:10], vs, tickets),
	}
	n, err := e.writeFenced(ctx, name, calls, nil)
	if err != nil || n != 1 {
		t.Fatalf("writeFenced: %d written, %v; want 1", n, err)
	}
	if line, _ := rdb.ZCard(ctx, k.key("queue")).Result(); line != 3 {
		t.Fatalf("the line holds %d places, want the first chunk's 3", line)
	}
	if progress, _ := rdb.HGet(ctx, k.key("draw"), "written").Int(); progress != 3 {
		t.Fatalf("progress %d, want 3", progress)
	}
}

// TestFenceRefusesAChangeBeforeExec: whatever changes between a chunk's
// check and its EXEC (a buyer withdraws, the draw is finished, another
// instance takes the lease or it runs out) refuses the transaction: the
// watched keys cover what the check read.
func TestFenceRefusesAChangeBeforeExec(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func(rdb redis.UniversalClient, k keys) error
	}{
		{"a buyer withdraws", func(rdb redis.UniversalClient, k keys) error {
			return rdb.ZAdd(ctx, k.key("withdrawn"), redis.Z{Score: 9, Member: "v8"}).Err()
		}},
		{"the draw is done", func(rdb redis.UniversalClient, k keys) error {
			return rdb.HSet(ctx, k.key("draw"), "state", "done").Err()
		}},
		{"another takes the lease", func(rdb redis.UniversalClient, k keys) error {
			return rdb.Set(ctx, k.key("drawlease"), "other", 0).Err()
		}},
		{"the lease is gone", func(rdb redis.UniversalClient, k keys) error {
			return rdb.Del(ctx, k.key("drawlease")).Err()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, name, rdb := drawBegun(t, 10)
			k := testKeys(rdb, name)
			base, _ := rdb.HGet(ctx, k.key("draw"), "base").Int64()
			c := chunkArgs("me", 5000, base, 0, []int{6, 2, 9}, []string{"v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9"},
				[]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
			f := e.fence(name)
			var check, exec *redis.Cmd
			err := rdb.Watch(ctx, func(tx *redis.Tx) error {
				if _, err := tx.Pipelined(ctx, func(p redis.Pipeliner) error {
					check = f.open(ctx, p, c)
					return nil
				}); err != nil {
					return err
				}
				if ok, err := check.Int64(); err != nil || ok != 1 {
					t.Fatalf("the check: %d %v, want it to pass", ok, err)
				}
				if err := tc.change(rdb, k); err != nil { // another connection
					return err
				}
				_, err := tx.Pipelined(ctx, func(p redis.Pipeliner) error {
					exec = f.commit(ctx, p, c, 3)
					return nil
				})
				return err
			}, f.draw)
			if !errors.Is(err, redis.Nil) || !errors.Is(exec.Err(), redis.Nil) {
				t.Fatalf("EXEC after the change: %v (%v), want it refused", exec.Err(), err)
			}
			if line, _ := rdb.ZCard(ctx, k.key("queue")).Result(); line != 0 {
				t.Fatalf("the refused transaction put %d places in the line", line)
			}
		})
	}
}

// TestDrawFencedAsChunked: a draw whose chunks go as fenced transactions
// leaves Redis as one written by draw_chunk.lua alone: the same line, the
// same drawn list and the same liveness cells (one clock stamps both).
func TestDrawFencedAsChunked(t *testing.T) {
	ctx := context.Background()
	e, fencedRoom, rdb := prequeueRoom(t)
	chunkedRoom := servicetest.RoomName(t, rdb)
	s, err := e.Room(ctx, fencedRoom)
	must(t, err)
	must(t, e.SaveRoom(ctx, chunkedRoom, s))
	const n = 2500
	for _, name := range []string{fencedRoom, chunkedRoom} {
		fillPrequeue(t, rdb, name, n)
	}
	// Both rooms draw with the first room's seed.
	for _, f := range []string{"seed", "commit"} {
		v, err := rdb.HGet(ctx, testKeys(rdb, fencedRoom).key("draw"), f).Result()
		must(t, err)
		must(t, rdb.HSet(ctx, testKeys(rdb, chunkedRoom).key("draw"), f, v).Err())
	}
	dump := map[string][]string{}
	for _, tc := range []struct {
		room    string
		chunked bool
		fenced  int // chunks that went fenced
	}{
		{fencedRoom, false, 9}, // the first of ten goes by draw_chunk.lua
		{chunkedRoom, true, 0},
	} {
		openNow(t, e, tc.room)
		fenced := 0
		st, err := e.Draw(ctx, tc.room, DrawOptions{Chunk: 250, Depth: 4, chunked: tc.chunked, afterChunk: func(_ int, f bool) {
			if f {
				fenced++
			}
		}})
		if err != nil || st != DrawDone {
			t.Fatalf("draw %s: %v %v", tc.room, st, err)
		}
		if fenced != tc.fenced {
			t.Fatalf("%s: %d chunks fenced, want %d", tc.room, fenced, tc.fenced)
		}
		k := testKeys(rdb, tc.room)
		var out []string
		for _, z := range rdb.ZRangeWithScores(ctx, k.key("queue"), 0, -1).Val() {
			out = append(out, z.Member.(string), strconv.FormatFloat(z.Score, 'f', -1, 64))
		}
		out = append(out, rdb.Get(ctx, k.key("drawn")).Val(), rdb.Get(ctx, k.key("seen")).Val())
		dump[tc.room] = out
		if got := len(out) - 2; got != 2*n {
			t.Fatalf("%s: the line holds %d places, want %d", tc.room, got/2, n)
		}
	}
	if !slices.Equal(dump[fencedRoom], dump[chunkedRoom]) {
		t.Fatal("the fenced draw left another line, drawn list or liveness cells than draw_chunk.lua's")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
