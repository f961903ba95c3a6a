-- KEYS: cfg bucket
-- order_bucket.lua: the seed's global token bucket on the order endpoint,
-- on Redis TIME, shared by every instance: capacity orderBurst, refilled at
-- orderRate per second.
-- Reply: {1, 0} taken, {0, retryAfterMs} empty, {-1, 0} unknown room
local cfg = redis.call('HMGET', K.cfg, 'orderRate', 'orderBurst', 'mode')
if not cfg[1] then return {-1, 0} end
if cfg[3] == 'passthrough' then return {1, 0} end -- the no-room baseline
local rate = tonumber(cfg[1])
local cap = tonumber(cfg[2])
local now = nowUs() / 1000
local b = redis.call('HMGET', K.bucket, 'tokens', 'ts')
local tokens = tonumber(b[1]) or cap
local ts = tonumber(b[2]) or now
if now > ts then tokens = tokens + (now - ts) * rate / 1000 end
if tokens > cap then tokens = cap end
local ok, wait = 0, 0
if tokens >= 1 then
  tokens = tokens - 1
  ok = 1
else
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', K.bucket, 'tokens', string.format('%.6f', tokens), 'ts', string.format('%.3f', now))
redis.call('PEXPIRE', K.bucket, math.ceil(cap / rate * 1000) + 60000)
return {ok, wait}
