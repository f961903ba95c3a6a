-- KEYS: draw drawlease withdrawn camp seenbase seen drawn
-- draw_fence.lua: the check that opens each transaction writing a chunk of
-- the drawn order as plain commands (see fence in draw_fence.go). It is
-- sent by EVAL with its source and without lib, so that it never meets
-- NOSCRIPT. The chunk may go to the line as it is when ARGV[2] holds the
-- lease, the draw is not done, the chunk starts at the progress, nobody
-- has withdrawn and no pre-queue ticket has a campaign (draw_chunk.lua's
-- per-place cases): then the script writes the chunk's drawn-list entries
-- and liveness cells, which nothing reads past the progress. Otherwise,
-- or on an error, it touches the draw's hash, which the caller WATCHes,
-- so that EXEC refuses the transaction, and draw_chunk.lua writes the
-- chunk. draw_chunk.lua, which writes each draw call's first chunk, has
-- presized the drawn list and the cells.
-- ARGV: 2 owner, 3 first place (0-based), 4 the chunk's pre-queue tickets
--   as 4-byte big-endian numbers
-- Reply: 1 go on; 0 refused, for draw_chunk.lua to write; -1 refused, the
--   lease lost or the draw done
local function refuse(why)
  if redis.call('EXISTS', K.draw) == 1 then
    redis.call('HINCRBY', K.draw, 'fenced', 1)
  else -- a deleted room: touched, and left deleted
    redis.call('HSET', K.draw, 'fenced', 1)
    redis.call('DEL', K.draw)
  end
  return why
end
local function check()
  local draw = redis.call('HMGET', K.draw, 'state', 'written', 'base')
  if redis.call('GET', K.drawlease) ~= ARGV[2] or draw[1] ~= 'drawing' then return refuse(-1) end
  local start, n = tonumber(ARGV[3]), #ARGV[4] / 4
  if start ~= (tonumber(draw[2]) or 0) or n < 1 or n % 1 ~= 0
    or redis.call('EXISTS', K.withdrawn) == 1 or redis.call('EXISTS', K.camp) == 1 then
    return refuse(0)
  end
  redis.call('SETRANGE', K.drawn, 4 * start, ARGV[4])
  -- The cells of the chunk's lines, stamped as lib.lua's markSeen does (its
  -- nowUs and seenValue).
  local now = CLOCK_US
  if not now then
    local t = redis.call('TIME')
    now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  local v = math.floor(now / 2000000) % 65535 + 1
  local base, sbase = tonumber(draw[3]), tonumber(redis.call('GET', K.seenbase)) or 0
  local first, last = math.max(base + start + 1, sbase + 1), base + start + n
  if first <= last then
    redis.call('SETRANGE', K.seen, 2 * (first - sbase), string.rep(string.char(math.floor(v / 256), v % 256), last - first + 1))
  end
  return 1
end
local ok, r = pcall(check)
if not ok then
  refuse(0)
  if type(r) == 'table' then r = r.err end
  return redis.error_reply('draw fence: ' .. tostring(r))
end
return r
