-- KEYS: queue counts departed departing tokens active prequeue withdrawn draw cfg rate away awaytk back campof jtis jtiof
-- leave.lua: a visitor leaves the line (or the pre-queue, or the side list
-- of those passed over while away), or gives up an unused pass.
-- ARGV: 2 visitor
-- Reply: 1 left the line, 2 gave up a READY pass, 0 nothing to leave
local v = ARGV[2]
-- DRAW: leaving the pre-queue. Before the draw the entry goes. During it
-- the pre-queue stays as frozen, so that every instance draws the same
-- order: the entry is withdrawn, and its place in the drawn block departs.
local pt = redis.call('ZSCORE', K.prequeue, v)
if pt and not redis.call('ZSCORE', K.withdrawn, v) then
  local st = redis.call('HGET', K.draw, 'state')
  if not st then
    redis.call('ZREM', K.prequeue, v)
    redis.call('HDEL', K.campof, v) -- ATTRIBUTION
    redis.call('HINCRBY', K.counts, 'leaves', 1)
    return 1
  elseif st == 'drawing' then
    redis.call('ZADD', K.withdrawn, pt, v)
    local s = redis.call('ZSCORE', K.queue, v)
    if s then depart(v, tonumber(s), 'leaves') else
      redis.call('HDEL', K.campof, v) -- ATTRIBUTION
      redis.call('HINCRBY', K.counts, 'leaves', 1)
    end
    return 1
  end
end
local s = redis.call('ZSCORE', K.queue, v)
if s then
  depart(v, tonumber(s), 'leaves')
  return 1
end
-- ABSENCE: a passed-over visitor's ticket is behind the head already, so
-- nobody's rank changes; only the count does.
if redis.call('ZREM', K.away, v) + redis.call('HDEL', K.awaytk, v) + redis.call('ZREM', K.back, v) > 0 then
  redis.call('HDEL', K.campof, v) -- ATTRIBUTION
  redis.call('HINCRBY', K.counts, 'leaves', 1)
  return 1
end
local nowMs = math.floor(nowUs() / 1000)
local e = livePass(v, nowMs)
if e and e.s == 'R' then
  redis.call('HDEL', K.tokens, v)
  redis.call('ZREM', K.active, v)
  forgetJtis({v}) -- GATE
  redis.call('HINCRBY', K.counts, 'forfeited', 1)
  local ttl = tonumber(redis.call('HGET', K.cfg, 'tokenTTLSeconds')) or 300
  noteHolds(1, math.max(0, nowMs - (e.x - ttl * 1000))) -- ABSENCE: for the ETA
  return 2
end
return 0
