-- KEYS: cfg waitslot
-- wait_slot.lua: books a client network's next no-JavaScript join in the
-- room. A network's bookings are ARGV[3] ms apart, by Redis TIME, however
-- many ask at once, so that the wait path lets at most 1000/ARGV[3] of its
-- joins a second; the visitor may join ARGV[4] ms (their wait) after their
-- booking. waitslot holds each network's next free booking; a network's
-- entry goes once that time has passed, and the key once all have. A
-- network booked more than ARGV[5] ms ahead, or a new network while
-- ARGV[6] are booked, is refused: the set stays bounded.
-- ARGV: 2 the client's network, 3 spacing ms, 4 wait ms, 5 most ms ahead,
--   6 most networks
-- Reply: {code, ms, server ms}: code 1 booked, ms is when the visitor may
--   join; code 0 refused, ms is when to ask again; code -1 unknown room
if redis.call('EXISTS', K.cfg) == 0 then return {-1, '0', '0'} end
local now = math.floor(nowUs() / 1000)
local spacing, wait, ahead, most = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
redis.call('ZREMRANGEBYSCORE', K.waitslot, '-inf', I(now))
local slot = tonumber(redis.call('ZSCORE', K.waitslot, ARGV[2]))
if not slot then
  if redis.call('ZCARD', K.waitslot) >= most then return {0, I(now + spacing), I(now)} end
  slot = now
end
if slot - now > ahead then return {0, I(slot - ahead), I(now)} end
redis.call('ZADD', K.waitslot, I(slot + spacing), ARGV[2])
local last = redis.call('ZRANGE', K.waitslot, -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', K.waitslot, I(tonumber(last[2]) - now + 1000))
return {1, I(slot + wait), I(now)}
