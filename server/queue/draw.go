package queue

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"waitingroom/server/draw"
	"waitingroom/server/room"
)

// ErrDrawBusy reports that another instance holds the draw's lease.
var ErrDrawBusy = errors.New("another instance is drawing")

// errLeaseLost reports that the lease passed to another owner mid-draw.
var errLeaseLost = errors.New("draw lease lost")

// errDrawGap reports a chunk refused because one before it, sent in the
// same round trip, failed: the next call of Draw goes on from the places
// written.
var errDrawGap = errors.New("draw chunk after a failed one")

// DrawOptions tune Engine.Draw; zero values take the defaults.
type DrawOptions struct {
	// Owner names the drawing instance in the lease (default: random).
	Owner string
	// Lease is how long the lease outlives the owner's last write
	// (default 5 s): another instance takes over a dead owner's draw
	// after it.
	Lease time.Duration
	// Chunk is the number of places written per call (default 1000; an
	// eighth of it where the line's hash table has just doubled, see
	// chunkSize), and Read the number of pre-queue entries read per call
	// (default 5000); both keep every Redis call short (1 to 2 ms on an
	// idle machine). Depth is the number of calls sent in one round trip
	// (default 8), in order: Redis runs each on its own, so that other
	// clients' commands go between them.
	Chunk, Read, Depth int
	// afterChunk, when set, runs after each chunk written, saying whether
	// it went as a fenced transaction (tests).
	afterChunk func(written int, fenced bool)
	// chunked writes every chunk by draw_chunk.lua (tests).
	chunked bool
}

// DrawState is what Draw found or did.
type DrawState string

// The outcomes of Draw.
const (
	// DrawNone: nothing to draw (no opening, or not past it).
	DrawNone DrawState = ""
	// DrawDone: the draw is complete (by this call or an earlier one).
	DrawDone DrawState = "done"
)

// SetDrawSeeder makes the engine derive its draws' seeds with s from the
// deployment's secret: Redis keeps only a random nonce and the commitment
// until the reveal, and every instance with the same secret derives the
// same seed. Without a seeder, the seed itself is kept in Redis, where any
// reader of Redis learns it before the draw.
func (e *Engine) SetDrawSeeder(s *draw.Seeder) { e.seeder = s }

// ensureSeed commits the room's draw to a seed unless it is committed,
// and returns the commitment in force: it stores a new nonce (the seed is
// derived from it by the seeder) or, without a seeder, a new seed.
func (e *Engine) ensureSeed(ctx context.Context, roomName string) (string, error) {
	field, value, seed := "seed", []byte(nil), []byte(nil)
	var err error
	if e.seeder == nil {
		seed, err = draw.NewSeed()
		value = seed
	} else {
		field = "nonce"
		if value, err = draw.NewNonce(); err == nil {
			seed, err = e.seeder.Seed(roomName, value)
		}
	}
	if err != nil {
		return "", err
	}
	c, err := e.run(ctx, e.s.drawSeed, roomName, field, hex.EncodeToString(value), draw.Commitment(seed)).Text()
	if err != nil {
		return "", fmt.Errorf("queue: draw seed %s: %w", roomName, err)
	}
	return c, nil
}

// Draw performs room's pre-queue draw if the room is past its opening and
// the draw is not done: it freezes the pre-queue, takes the draw's lease,
// reads the pre-queue in chunks, orders it in process as draw.Order does and
// writes the drawn order into the line in chunks, each a short script,
// then marks the draw done. Any number of instances may call it at once:
// one holds the lease, the others get ErrDrawBusy; an instance that dies
// mid-draw leaves its progress, and another takes over when its lease runs
// out. Every owner computes the same order from the same frozen pre-queue
// and seed, so the result does not depend on who draws.
func (e *Engine) Draw(ctx context.Context, roomName string, opt DrawOptions) (DrawState, error) {
	if opt.Owner == "" {
		opt.Owner = rand.Text()
	}
	if opt.Lease <= 0 {
		opt.Lease = 5 * time.Second
	}
	if opt.Chunk <= 0 {
		opt.Chunk = 1000
	}
	if opt.Read <= 0 {
		opt.Read = 5000
	}
	if opt.Depth <= 0 {
		opt.Depth = 8
	}
	st, err := e.drawWith(ctx, roomName, opt)
	if err != nil {
		return st, fmt.Errorf("queue: draw %s: %w", roomName, err)
	}
	return st, nil
}

func (e *Engine) drawWith(ctx context.Context, roomName string, opt DrawOptions) (DrawState, error) {
	leaseMs := opt.Lease.Milliseconds()
	// A room drawn without a seed made in advance (its settings were
	// written around this code) gets one now; SaveRoom makes it earlier.
	if _, err := e.ensureSeed(ctx, roomName); err != nil {
		return DrawNone, err
	}
	res, err := e.run(ctx, e.s.drawBegin, roomName, opt.Owner, leaseMs).Slice()
	if err != nil {
		return DrawNone, err
	}
	switch asInt(res[0]) {
	case -1:
		return DrawNone, room.ErrNotFound
	case 0:
		return DrawState(asString(res[1])), nil
	case 1:
		return DrawNone, ErrDrawBusy
	}
	base, n, written := asInt(res[1]), asInt(res[2]), asInt(res[3])
	var blocks []lineBlock
	if len(res) > 7 {
		if blocks, err = parseBlocks(base, n, asString(res[7])); err != nil {
			return DrawNone, err
		}
	}
	seed, err := e.committedSeed(roomName, asString(res[4]), asString(res[5]), asString(res[6]))
	if err != nil {
		// An instance that knows the committed secret may draw at once.
		if yerr := e.run(ctx, e.s.drawYield, roomName, opt.Owner).Err(); yerr != nil {
			err = errors.Join(err, fmt.Errorf("give the lease up: %w", yerr))
		}
		return DrawNone, err
	}
	visitors, tickets, keys, err := e.readPrequeue(ctx, roomName, opt.Read, opt.Depth, n, seed)
	if err != nil {
		return DrawNone, err
	}
	order := draw.Sorted(keys)
	if blocks != nil {
		err = e.writeDrawnLines(ctx, roomName, opt, blocks, int(written), order, visitors, tickets)
	} else {
		err = e.writeDrawn(ctx, roomName, opt, base, int(written), order, visitors, tickets)
	}
	if err != nil {
		return DrawNone, err
	}
	done, err := e.run(ctx, e.s.drawDone, roomName, opt.Owner, hex.EncodeToString(seed)).Int64()
	switch {
	case err != nil:
		return DrawNone, err
	case done < 0:
		return DrawNone, errLeaseLost
	case done == 0:
		return DrawNone, errors.New("places missing after the last chunk")
	}
	return DrawDone, nil
}

// lineBlock is one line's block of numbers in a drawn pre-queue: its
// entries take base+1 .. base+n of the line's numbers, in drawn order.
type lineBlock struct{ base, n int64 }

// parseBlocks reads draw_begin.lua's lines ("n0 b1 n1 b2 n2 b3 n3", ”
// for a pre-queue all in the first line, nil then): each line's block,
// the first line's from base. The blocks hold the n entries.
func parseBlocks(base, n int64, s string) ([]lineBlock, error) {
	if s == "" {
		return nil, nil
	}
	var f [2*maxLines - 1]int64
	if !parseFields(s, f[:]) {
		return nil, fmt.Errorf("draw begin: lines %q", s)
	}
	blocks := []lineBlock{{base, f[0]}}
	sum := f[0]
	for i := 1; i < maxLines; i++ {
		blocks = append(blocks, lineBlock{f[2*i-1], f[2*i]})
		sum += f[2*i]
	}
	if sum != n {
		return nil, fmt.Errorf("draw begin: the lines' blocks hold %d entries, the pre-queue %d", sum, n)
	}
	return blocks, nil
}

// writeDrawnLines writes the drawn order of a room whose pre-queue
// entries are in several lines, from place written on, by
// draw_lines.lua, opt.Chunk places a call and opt.Depth calls a round
// trip: each place goes to its entry's line (pqline), at the next number
// of the line's block, so each line gets its entries in the drawn order.
func (e *Engine) writeDrawnLines(ctx context.Context, roomName string, opt DrawOptions, blocks []lineBlock, written int, order []int, visitors []string, tickets []int64) error {
	lineOf, err := e.prequeueLines(ctx, roomName, visitors)
	if err != nil {
		return err
	}
	next := make([]int64, len(blocks))
	number := make([]int64, len(order))
	for place, j := range order {
		l := lineOf[j]
		next[l]++
		if next[l] > blocks[l].n {
			return fmt.Errorf("line %d holds more than its %d drawn entries", l, blocks[l].n)
		}
		number[place] = blocks[l].base + next[l]
	}
	leaseMs := opt.Lease.Milliseconds()
	loaded := false
	for start := written; start < len(order); {
		calls := make([][]any, 0, opt.Depth)
		for ; start < len(order) && len(calls) < opt.Depth; start += opt.Chunk {
			chunk := order[start:min(start+opt.Chunk, len(order))]
			packed := make([]byte, 0, 4*len(chunk))
			for _, j := range chunk {
				packed = binary.BigEndian.AppendUint32(packed, uint32(tickets[j]))
			}
			args := make([]any, 0, 4+3*len(chunk))
			args = append(args, opt.Owner, leaseMs, start, string(packed))
			for i, j := range chunk {
				args = append(args, lineOf[j], number[start+i], visitors[j])
			}
			calls = append(calls, args)
		}
		var cmds []*redis.Cmd
		if !loaded {
			// The first call loads the script if Redis lacks it.
			cmds = append(cmds, e.run(ctx, e.s.drawLines, roomName, calls[0]...))
			calls, loaded = calls[1:], true
		}
		if len(calls) > 0 {
			more, err := e.pipeline(ctx, e.s.drawLines, roomName, calls)
			if err != nil {
				return err
			}
			cmds = append(cmds, more...)
		}
		if err := settleChunks(cmds, opt.afterChunk); err != nil {
			return err
		}
	}
	return nil
}

// settleChunks reads the replies of a draw's chunk scripts (the places
// written so far), in order, telling after of each.
func settleChunks(cmds []*redis.Cmd, after func(written int, fenced bool)) error {
	for _, c := range cmds {
		w, err := c.Int64()
		switch {
		case err != nil:
			return err
		case w == -2:
			return errDrawGap
		case w < 0:
			return errLeaseLost
		}
		if after != nil {
			after(int(w), false)
		}
	}
	return nil
}

// prequeueLines returns the line (from 0) of each of visitors' pre-queue
// entries, read from pqline in calls of 5,000.
func (e *Engine) prequeueLines(ctx context.Context, roomName string, visitors []string) ([]int, error) {
	key := roomKeys(e.ns, roomName).key("pqline")
	out := make([]int, len(visitors))
	const step = 5000
	for lo := 0; lo < len(visitors); lo += step {
		hi := min(lo+step, len(visitors))
		vals, err := e.rdb.HMGet(ctx, key, visitors[lo:hi]...).Result()
		if err != nil {
			return nil, fmt.Errorf("read the pre-queue's lines: %w", err)
		}
		for i, v := range vals {
			if s, ok := v.(string); ok {
				l, err := strconv.Atoi(s)
				if err != nil || l < 1 || l >= maxLines {
					return nil, fmt.Errorf("read the pre-queue's lines: line %q", s)
				}
				out[lo+i] = l
			}
		}
	}
	return out, nil
}

// committedSeed returns the seed that a draw committed to: the stored
// seed (hex) when there is one, else the seeder's seed of the stored nonce
// (hex) under the secret whose seed's SHA-256 is commit. A draw committed
// under a SECRET_KEY that no longer derives it is not drawn with any other
// seed: it waits for that secret.
func (e *Engine) committedSeed(roomName, seedHex, nonceHex, commit string) ([]byte, error) {
	if seedHex != "" {
		seed, err := hex.DecodeString(seedHex)
		if err != nil || len(seed) != draw.SeedLen {
			return nil, errors.New("stored seed is not 32 bytes of hex")
		}
		return seed, nil
	}
	nonce, err := hex.DecodeString(nonceHex)
	if err != nil || len(nonce) != draw.NonceLen {
		return nil, errors.New("stored nonce is not 32 bytes of hex")
	}
	if e.seeder == nil {
		return nil, errors.New("the draw's seed is derived from a secret, and this engine has no seeder")
	}
	return e.seeder.Committed(roomName, nonce, commit)
}

// writeDrawn writes the drawn order from place written on, opt.Chunk
// places a call and opt.Depth calls a round trip, in order, so that the
// progress recorded ('written') never passes a chunk not yet written. A
// goroutine builds the next round trip's calls while one is under way. The
// first call goes alone by draw_chunk.lua through run, which loads the
// script if Redis lacks it and sizes the drawn list and the liveness cells.
// The others go as fenced transactions of plain commands (writeFenced)
// until a fence refuses one, for a buyer who withdrew or a campaign, and
// from then on by draw_chunk.lua, which handles every place. A call that
// finds a script gone fails the draw, which the next call of Draw takes up
// from its progress.
func (e *Engine) writeDrawn(ctx context.Context, roomName string, opt DrawOptions, base int64, written int, order []int, visitors []string, tickets []int64) error {
	leaseMs := opt.Lease.Milliseconds()
	// The line before the places to write: late joiners and the places
	// written, which chunkSize's sizes follow.
	lineBefore, err := e.rdb.ZCard(ctx, roomKeys(e.ns, roomName).key("queue")).Result()
	if err != nil {
		return err
	}
	rounds := make(chan [][]any, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	wg.Go(func() {
		defer close(rounds)
		calls := make([][]any, 0, opt.Depth)
		for start, size := written, 0; start < len(order); start += size {
			size = chunkSize(lineBefore+int64(start-written), opt.Chunk)
			calls = append(calls, chunkArgs(opt.Owner, leaseMs, base, start, order[start:min(start+size, len(order))], visitors, tickets))
			if len(calls) < opt.Depth && start+size < len(order) {
				continue
			}
			select {
			case rounds <- calls:
			case <-stop:
				return
			}
			calls = make([][]any, 0, opt.Depth)
		}
	})
	settle := func(cmds []*redis.Cmd) error { return settleChunks(cmds, opt.afterChunk) }
	loaded, fenced := false, !opt.chunked
	for calls := range rounds {
		if !loaded {
			if err := settle([]*redis.Cmd{e.run(ctx, e.s.drawChunk, roomName, calls[0]...)}); err != nil {
				return err
			}
			loaded = true
			calls = calls[1:]
		}
		if fenced && len(calls) > 0 {
			k, err := e.writeFenced(ctx, roomName, calls, opt.afterChunk)
			if err != nil {
				return err
			}
			fenced = k == len(calls)
			calls = calls[k:]
		}
		if len(calls) > 0 {
			cmds, err := e.pipeline(ctx, e.s.drawChunk, roomName, calls)
			if err != nil {
				return err
			}
			if err := settle(cmds); err != nil {
				return err
			}
		}
	}
	return nil
}

// chunkSize is the number of places of the chunk that finds line members
// in the line, chunk outside the stretches where the line's hash table
// has just doubled. Redis doubles a sorted set's table when its members
// reach a power of two, and the new table's pages are first touched by
// the inserts that follow: at a million members, 1,000 inserts just past
// 2^18 or 2^19 took 6–9 ms against 1 ms elsewhere (SLOWLOG). Over the
// 4 chunks' worth of places from each doubling on, from 2^16, chunks are an
// eighth of the size, so that no call takes that whole cost.
func chunkSize(line int64, chunk int) int {
	small := max(1, chunk/8)
	for p := int64(1) << 16; p <= line+int64(chunk); p <<= 1 {
		if line+int64(chunk) > p && line < p+4*int64(chunk) {
			return small
		}
	}
	return chunk
}

// chunkArgs returns the arguments of draw_chunk.lua for the places from
// start on, drawn as chunk (indexes into visitors and tickets): the
// chunk's pre-queue tickets packed as 4-byte big-endian numbers, then each
// place's line number (base + place + 1) and visitor, in the order ZADD
// takes them.
func chunkArgs(owner string, leaseMs, base int64, start int, chunk []int, visitors []string, tickets []int64) []any {
	packed := make([]byte, 0, 4*len(chunk))
	for _, j := range chunk {
		packed = binary.BigEndian.AppendUint32(packed, uint32(tickets[j]))
	}
	args := make([]any, 0, 4+2*len(chunk))
	args = append(args, owner, leaseMs, start, string(packed))
	for i, j := range chunk {
		args = append(args, base+int64(start+i)+1, visitors[j])
	}
	return args
}

// drawReaders is the number of round trips of a pre-queue read under way
// at once: while one's replies are parsed, Redis serves another.
const drawReaders = 2

// readPrequeue reads the frozen pre-queue of n entries in ticket order,
// read entries a call and depth calls a round trip, by rank: it is frozen,
// so its ranks do not move. It checks that it holds n entries, in order.
// It returns the visitors, their tickets and the tickets' draw keys under
// seed (draw.Keys), computed for each round trip's entries by the reader
// that read them, while the others read on.
func (e *Engine) readPrequeue(ctx context.Context, roomName string, read, depth int, n int64, seed []byte) ([]string, []int64, [][sha256.Size]byte, error) {
	key := roomKeys(e.ns, roomName).key("prequeue")
	visitors := make([]string, n)
	tickets := make([]int64, n)
	keys := make([][sha256.Size]byte, n)
	step := int64(read) * int64(depth)
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range drawReaders {
		g.Go(func() error {
			for {
				lo := next.Add(step) - step
				if lo >= n {
					return nil
				}
				hi := min(lo+step, n)
				pipe := e.rdb.Pipeline()
				cmds := make([]*redis.ZSliceCmd, 0, depth)
				for a := lo; a < hi; a += int64(read) {
					cmds = append(cmds, pipe.ZRangeWithScores(gctx, key, a, min(a+int64(read), hi)-1))
				}
				if _, err := pipe.Exec(gctx); err != nil {
					return err
				}
				i := lo
				for _, c := range cmds {
					for _, z := range c.Val() {
						if i == hi {
							return fmt.Errorf("ranks %d to %d hold more than %d entries", lo, hi-1, hi-lo)
						}
						visitors[i], tickets[i] = z.Member.(string), int64(z.Score)
						i++
					}
				}
				if i != hi {
					return fmt.Errorf("ranks %d to %d hold %d entries", lo, hi-1, i-lo)
				}
				draw.Keys(seed, tickets[lo:hi], keys[lo:hi])
			}
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, nil, fmt.Errorf("read pre-queue: %w", err)
	}
	for i := 1; i < len(tickets); i++ {
		if tickets[i] <= tickets[i-1] {
			return nil, nil, nil, fmt.Errorf("pre-queue moved while read: ticket %d after %d", tickets[i], tickets[i-1])
		}
	}
	card, err := e.rdb.ZCard(ctx, key).Result()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read pre-queue: %w", err)
	}
	if card != n {
		return nil, nil, nil, fmt.Errorf("pre-queue holds %d entries, frozen with %d", card, n)
	}
	return visitors, tickets, keys, nil
}

// DrawInfo is a room's published draw: the commitment from the start, and
// once the draw is done the seed and the pre-queue tickets in drawn order.
type DrawInfo struct {
	Commitment string  `json:"commitment"`
	Done       bool    `json:"done"`
	Seed       string  `json:"seed,omitempty"`
	Tickets    []int64 `json:"tickets"`
}

// drawnCache keeps finished draws' lists, which never change, by room and
// commitment.
type drawnCache struct {
	mu sync.Mutex
	m  map[string][]int64
}

// DrawInfo returns room's draw. The seed is never revealed before the draw
// is done. It returns room.ErrNotFound for an unknown room.
func (e *Engine) DrawInfo(ctx context.Context, roomName string) (DrawInfo, error) {
	k := roomKeys(e.ns, roomName)
	vals, err := e.rdb.HMGet(ctx, k.key("draw"), "commit", "state", "seed", "n").Result()
	if err != nil {
		return DrawInfo{}, fmt.Errorf("queue: draw info %s: %w", roomName, err)
	}
	info := DrawInfo{Commitment: asString(vals[0]), Tickets: []int64{}}
	if info.Commitment == "" {
		if _, err := e.Room(ctx, roomName); err != nil {
			return DrawInfo{}, err
		}
		return info, nil
	}
	if asString(vals[1]) != "done" {
		return info, nil
	}
	info.Done, info.Seed = true, asString(vals[2])
	ck := roomName + " " + info.Commitment
	e.drawn.mu.Lock()
	cached, ok := e.drawn.m[ck]
	e.drawn.mu.Unlock()
	if ok {
		info.Tickets = cached
		return info, nil
	}
	n, _ := strconv.ParseInt(asString(vals[3]), 10, 64)
	const step = 1 << 18 // 1 MiB a call
	buf := make([]byte, 0, 4*n)
	for off := int64(0); off < 4*n; off += 4 * step {
		b, err := e.rdb.GetRange(ctx, k.key("drawn"), off, min(off+4*step, 4*n)-1).Bytes()
		if err != nil {
			return DrawInfo{}, fmt.Errorf("queue: draw info %s: %w", roomName, err)
		}
		buf = append(buf, b...)
	}
	if int64(len(buf)) != 4*n {
		return DrawInfo{}, fmt.Errorf("queue: draw info %s: drawn list holds %d bytes, want %d", roomName, len(buf), 4*n)
	}
	info.Tickets = make([]int64, n)
	for i := range info.Tickets {
		info.Tickets[i] = int64(binary.BigEndian.Uint32(buf[4*i:]))
	}
	e.drawn.mu.Lock()
	if e.drawn.m == nil {
		e.drawn.m = map[string][]int64{}
	}
	e.drawn.m[ck] = info.Tickets
	e.drawn.mu.Unlock()
	return info, nil
}

// NetworkCount is the number of pre-queue entries from one client network.
type NetworkCount struct {
	Network string `json:"network"`
	Entries int64  `json:"entries"`
}

// Networks returns the top client networks (/24 for IPv4, /64 for IPv6)
// by pre-queue entries, most first. It reads the room's counts in short
// HSCAN calls.
func (e *Engine) Networks(ctx context.Context, roomName string, top int) ([]NetworkCount, error) {
	key := roomKeys(e.ns, roomName).key("nets")
	var out []NetworkCount
	iter := e.rdb.HScan(ctx, key, 0, "", 1000).Iterator()
	for iter.Next(ctx) {
		net := iter.Val()
		if !iter.Next(ctx) {
			break
		}
		n, _ := strconv.ParseInt(iter.Val(), 10, 64)
		out = append(out, NetworkCount{Network: net, Entries: n})
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("queue: networks %s: %w", roomName, err)
	}
	slices.SortFunc(out, func(a, b NetworkCount) int {
		if a.Entries != b.Entries {
			return cmp.Compare(b.Entries, a.Entries)
		}
		return strings.Compare(a.Network, b.Network)
	})
	return out[:min(top, len(out))], nil
}
