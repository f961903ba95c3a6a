-- KEYS: cfg tokens active done counts rate
-- consume.lua: the order committed, by the claim's holder only; the pass
-- becomes a tombstone (so that a replay is told the token was used) and
-- its slot is free. The tombstone goes after the room's token TTL.
-- ARGV: 2 visitor, 3 holder
-- Reply: 1 consumed, 0 no such pass, -3 not claimed by this holder
local v = ARGV[2]
local e = getPass(v)
if not e or e.s == 'U' then return 0 end
if e.s ~= 'C' or e.h ~= ARGV[3] then return -3 end
local nowMs = math.floor(nowUs() / 1000)
local ttl = tonumber(redis.call('HGET', K.cfg, 'tokenTTLSeconds')) or 300
noteHolds(1, math.max(0, nowMs - (e.x - ttl * 1000))) -- ABSENCE: how long the slot was held, for the ETA
e.s, e.c, e.h, e.x = 'U', 0, '-', nowMs + ttl * 1000
putPass(v, e)
redis.call('ZREM', K.active, v)
redis.call('ZADD', K.done, I(e.x), v)
redis.call('HINCRBY', K.counts, 'consumed', 1)
return 1
