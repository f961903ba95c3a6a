-- KEYS: cfg bucket
-- order_refund.lua: gives back the order slot of an attempt that ended in
-- a 4xx (sold out, already used), so that invalid or doomed orders cannot
-- drain the room's order bucket. The bucket never goes above orderBurst.
-- Reply: 1 refunded, 0 nothing to refund (no bucket, or passthrough)
local cfg = redis.call('HMGET', K.cfg, 'orderBurst', 'mode')
if not cfg[1] or cfg[2] == 'passthrough' then return 0 end
local tokens = tonumber(redis.call('HGET', K.bucket, 'tokens'))
if not tokens then return 0 end
tokens = tokens + 1
local cap = tonumber(cfg[1])
if tokens > cap then tokens = cap end
redis.call('HSET', K.bucket, 'tokens', string.format('%.6f', tokens))
return 1
