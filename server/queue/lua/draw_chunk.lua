-- KEYS: draw drawlease queue withdrawn departed departing drawn seen seenbase camp campbase
-- draw_chunk.lua: writes one chunk of the drawn order, if ARGV[2] still
-- holds the lease: the buyer at place i (0-based) gets line number
-- base + i + 1, and the drawn list gets their pre-queue ticket. Writing a
-- chunk twice changes nothing, so an owner that takes over from a dead one
-- may start anywhere at or before the recorded progress. Each drawn buyer
-- counts as seen at the draw: one who is gone for good is abandoned
-- abandonAfterSeconds later, like anyone in line, and keeps the campaign
-- of their pre-queue ticket (ATTRIBUTION).
-- ARGV: 2 owner, 3 lease ms, 4 first place (0-based), 5 the chunk's
--   pre-queue tickets as 4-byte big-endian numbers, 6.. each place's line
--   number (decimal) and visitor, as ZADD takes them: with nobody withdrawn
--   and no campaign, the chunk goes to ZADD as it came
-- Reply: places written so far, -1 when the lease is lost, or -2 when the
--   chunk starts past the places written (a chunk before it failed: the
--   progress stays contiguous, and the next draw call goes on from it);
--   an error when the line numbers are not the chunk's places
if redis.call('GET', K.drawlease) ~= ARGV[2] then return -1 end
local start = tonumber(ARGV[4])
local d = redis.call('HMGET', K.draw, 'written', 'base', 'n')
local written, base, total = tonumber(d[1]) or 0, tonumber(d[2]), tonumber(d[3])
if start > written then return -2 end
local n = (#ARGV - 5) / 2
if n < 1 or n % 1 ~= 0 or #ARGV[5] ~= 4 * n or tonumber(ARGV[6]) ~= base + start + 1
  or tonumber(ARGV[#ARGV - 1]) ~= base + start + n then
  return redis.error_reply('draw chunk: the line numbers are not places ' .. start .. ' to ' .. (start + n - 1))
end
redis.call('PEXPIRE', K.drawlease, ARGV[3])
-- unpack takes at most about 8,000 values: the pairs go in slices.
local function zadd(t, from, to)
  for a = from, to, 4000 do redis.call('ZADD', K.queue, unpack(t, a, math.min(a + 3999, to))) end
end
local anyWithdrawn = redis.call('EXISTS', K.withdrawn) == 1
local anyCampaign = redis.call('EXISTS', K.camp) == 1 -- ATTRIBUTION
if anyWithdrawn or anyCampaign then
  local z, cbase = {}, campBase()
  for i = 0, n - 1 do
    local line, v = ARGV[6 + 2 * i], ARGV[7 + 2 * i]
    if anyWithdrawn and redis.call('ZSCORE', K.withdrawn, v) then
      -- Left during the draw: the place departs, once.
      if redis.call('ZADD', K.departed, line, line) == 1 then redis.call('RPUSH', K.departing, line) end
    else
      z[#z + 1] = line
      z[#z + 1] = v
      if anyCampaign then setCampaignAt(base + start + i + 1, campaignAt(u32(ARGV[5], 4 * i + 1), cbase), cbase) end
    end
  end
  zadd(z, 1, #z)
else
  zadd(ARGV, 6, #ARGV)
end
-- The drawn list and the drawn block's liveness cells get their full
-- length at once, zero-filled (no ticket is 0, and a cell of 0 is unknown,
-- like a missing one): grown by every chunk, each string would be copied
-- again and again.
local sbase = seenBase()
local function presize(key, len)
  if len > 0 and redis.call('STRLEN', key) < len then redis.call('SETRANGE', key, len - 1, '\0') end
end
presize(K.drawn, 4 * total)
if base + total > sbase then presize(K.seen, 2 * (base + total - sbase) + 2) end
-- The chunk's places are consecutive lines: their liveness cells are one
-- range, written at once (a withdrawn place's cell is never read).
local first, last = math.max(base + start + 1, sbase + 1), base + start + n
if first <= last then
  local v = seenValue(nowUs())
  redis.call('SETRANGE', K.seen, 2 * (first - sbase), string.rep(string.char(math.floor(v / 256), v % 256), last - first + 1))
end
redis.call('SETRANGE', K.drawn, 4 * start, ARGV[5])
local w = start + n
if w > written then redis.call('HSET', K.draw, 'written', I(w)) end
return w
