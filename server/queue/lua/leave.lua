-- leave.lua: a visitor leaves the line, or gives up an unused entry token.
-- ARGV: 2 visitor
-- Reply: 1 left the line, 2 gave up a READY token, 0 nothing to leave
local v = ARGV[2]
local s = redis.call('ZSCORE', P .. 'queue', v)
if s then
  depart(v, tonumber(s))
  return 1
end
local k = P .. 'tok:' .. v
if redis.call('HGET', k, 's') == 'READY' then
  redis.call('DEL', k)
  redis.call('ZREM', P .. 'active', v)
  redis.call('INCR', P .. 'forfeited')
  return 2
end
return 0
