-- KEYS: queue counts departed departing tokens active
-- leave.lua: a visitor leaves the line, or gives up an unused pass.
-- ARGV: 2 visitor
-- Reply: 1 left the line, 2 gave up a READY pass, 0 nothing to leave
local v = ARGV[2]
local s = redis.call('ZSCORE', K.queue, v)
if s then
  depart(v, tonumber(s), 'leaves')
  return 1
end
local e = livePass(v, math.floor(nowUs() / 1000))
if e and e.s == 'R' then
  redis.call('HDEL', K.tokens, v)
  redis.call('ZREM', K.active, v)
  redis.call('HINCRBY', K.counts, 'forfeited', 1)
  return 2
end
return 0
