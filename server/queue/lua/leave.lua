-- leave.lua: a visitor leaves the line, or gives up an unused entry token.
-- A departed ticket is recorded for the next tick's event, so that every
-- instance can lower the ranks behind it.
-- KEYS: 1 queue, 2 left, 3 departed, 4 tok:<visitor>, 5 active, 6 forfeited
-- ARGV: 1 visitor
-- Reply: 1 left the line, 2 gave up a READY token, 0 nothing to leave
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('INCR', KEYS[2])
  redis.call('RPUSH', KEYS[3], s)
  return 1
end
if redis.call('HGET', KEYS[4], 's') == 'READY' then
  redis.call('DEL', KEYS[4])
  redis.call('ZREM', KEYS[5], ARGV[1])
  redis.call('INCR', KEYS[6])
  return 2
end
return 0
