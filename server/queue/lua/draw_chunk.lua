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
--   pre-queue tickets as 4-byte big-endian numbers, 6.. its visitors
-- Reply: places written so far, -1 when the lease is lost, or -2 when the
--   chunk starts past the places written (a chunk before it failed: the
--   progress stays contiguous, and the next draw call goes on from it)
if redis.call('GET', K.drawlease) ~= ARGV[2] then return -1 end
local start = tonumber(ARGV[4])
if start > (tonumber(redis.call('HGET', K.draw, 'written')) or 0) then return -2 end
redis.call('PEXPIRE', K.drawlease, ARGV[3])
local base = tonumber(redis.call('HGET', K.draw, 'base'))
local z = {}
local anyWithdrawn = redis.call('EXISTS', K.withdrawn) == 1
local now, sbase, cbase = nowUs(), seenBase(), campBase()
local anyCampaign = redis.call('EXISTS', K.camp) == 1 -- ATTRIBUTION
for j = 6, #ARGV do
  local v = ARGV[j]
  local line = base + start + j - 5
  if anyWithdrawn and redis.call('ZSCORE', K.withdrawn, v) then
    -- Left during the draw: the place departs, once.
    if redis.call('ZADD', K.departed, I(line), I(line)) == 1 then redis.call('RPUSH', K.departing, I(line)) end
  else
    z[#z + 1] = I(line)
    z[#z + 1] = v
    if anyCampaign then setCampaignAt(line, campaignAt(u32(ARGV[5], 4 * (j - 6) + 1), cbase), cbase) end
  end
end
if #z > 0 then redis.call('ZADD', K.queue, unpack(z)) end
-- The chunk's places are consecutive lines: their liveness cells are one
-- range, written at once (a withdrawn place's cell is never read).
local first, last = math.max(base + start + 1, sbase + 1), base + start + #ARGV - 5
if first <= last then
  local v = seenValue(now)
  redis.call('SETRANGE', K.seen, 2 * (first - sbase), string.rep(string.char(math.floor(v / 256), v % 256), last - first + 1))
end
redis.call('SETRANGE', K.drawn, 4 * start, ARGV[5])
local w = start + #ARGV - 5
if w > (tonumber(redis.call('HGET', K.draw, 'written')) or 0) then redis.call('HSET', K.draw, 'written', I(w)) end
return w
