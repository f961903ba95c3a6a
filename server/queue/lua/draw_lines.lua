-- KEYS: draw drawlease queue* withdrawn departed* departing* drawn seen* seenbase* camp* campbase* ldrawn*
-- draw_lines.lua: draw_chunk.lua for a room whose pre-queue entries are
-- in several lines (LINES): writes one chunk of the drawn order, if ARGV[2]
-- still holds the lease. Each place goes to its entry's line, at the next
-- number of that line's block (see freeze in lib.lua): each line gets its
-- entries in the drawn order. The drawn list gets the chunk's pre-queue
-- tickets at their places in the room's order, as draw_chunk.lua writes
-- it, and each line's (ldrawn) at their numbers in the line, so that a
-- drawn buyer is shown their pre-queue ticket. Writing a chunk twice changes nothing. A drawn buyer counts as seen
-- at the draw and keeps the campaign of their pre-queue ticket.
-- ARGV: 2 owner, 3 lease ms, 4 first place (0-based), 5 the chunk's
--   pre-queue tickets as 4-byte big-endian numbers, 6.. each place's line
--   (from 0), number in that line and visitor
-- Reply: places written so far, -1 when the lease is lost, or -2 when the
--   chunk starts past the places written; an error when a number is
--   outside its line's block
if redis.call('GET', K.drawlease) ~= ARGV[2] then return -1 end
local start = tonumber(ARGV[4])
local d = redis.call('HMGET', K.draw, 'written', 'n')
local written, total = tonumber(d[1]) or 0, tonumber(d[2]) or 0
if start > written then return -2 end
local n = (#ARGV - 5) / 3
if n < 1 or n % 1 ~= 0 or #ARGV[5] ~= 4 * n or start + n > total then
  return redis.error_reply('draw lines: a chunk of ' .. n .. ' places from ' .. start .. ' of ' .. total)
end
redis.call('PEXPIRE', K.drawlease, ARGV[3])
if redis.call('STRLEN', K.drawn) < 4 * total then redis.call('SETRANGE', K.drawn, 4 * total - 1, '\0') end
local v = seenValue(nowUs())
local cell = string.char(math.floor(v / 256), v % 256)
-- Each line's block, and its liveness cells sized once per call.
local blocks = {}
local function block(l)
  if blocks[l] then return blocks[l] end
  local f = {'base', 'n0'}
  if l > 0 then f = {'b' .. l, 'n' .. l} end
  local b = redis.call('HMGET', K.draw, f[1], f[2])
  local blk = {base = tonumber(b[1]) or 0, n = tonumber(b[2]) or 0, sbase = 0, cbase = 0}
  useLine(l + 1)
  blk.sbase, blk.cbase = seenBase(), campBase()
  local last = 2 * (blk.base + blk.n - blk.sbase) + 2
  if blk.n > 0 and last > 0 and redis.call('STRLEN', K.seen) < last then redis.call('SETRANGE', K.seen, last - 1, '\0') end
  if blk.n > 0 and redis.call('STRLEN', K.ldrawn) < 4 * blk.n then redis.call('SETRANGE', K.ldrawn, 4 * blk.n - 1, '\0') end
  blocks[l] = blk
  return blk
end
useLine(1)
local pcbase = campBase() -- the pre-queue tickets' campaign cells are the first line's
local anyWithdrawn = redis.call('EXISTS', K.withdrawn) == 1
local anyCampaign = redis.call('EXISTS', K.camp) == 1
for k = 0, n - 1 do
  local l, num, who = tonumber(ARGV[6 + 3 * k]), tonumber(ARGV[7 + 3 * k]), ARGV[8 + 3 * k]
  if not l or l < 0 or l % 1 ~= 0 or not LK[l + 1] then return redis.error_reply('draw lines: no line ' .. tostring(ARGV[6 + 3 * k])) end
  local blk = block(l)
  if not num or num <= blk.base or num > blk.base + blk.n then
    return redis.error_reply('draw lines: number ' .. tostring(ARGV[7 + 3 * k]) .. ' is outside line ' .. l .. "'s block")
  end
  local camp = 0
  if anyCampaign then
    useLine(1)
    camp = campaignAt(u32(ARGV[5], 4 * k + 1), pcbase)
  end
  useLine(l + 1)
  redis.call('SETRANGE', K.ldrawn, 4 * (num - blk.base - 1), string.sub(ARGV[5], 4 * k + 1, 4 * k + 4))
  if anyWithdrawn and redis.call('ZSCORE', K.withdrawn, who) then
    -- Left during the draw: the place departs, once.
    if redis.call('ZADD', K.departed, num, num) == 1 then redis.call('RPUSH', K.departing, num) end
  else
    redis.call('ZADD', K.queue, num, who)
    if num > blk.sbase then redis.call('SETRANGE', K.seen, 2 * (num - blk.sbase), cell) end
    if camp ~= 0 then setCampaignAt(num, camp, blk.cbase) end
  end
end
useLine(1)
redis.call('SETRANGE', K.drawn, 4 * start, ARGV[5])
local w = start + n
if w > written then redis.call('HSET', K.draw, 'written', I(w)) end
return w
