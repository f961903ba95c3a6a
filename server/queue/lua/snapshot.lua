-- KEYS: cfg rate head tick queue soldout departed
-- snapshot.lua: what an instance needs to compute ranks in-process after it
-- (re)subscribes: the tick, the head and the departed tickets above it.
-- Reply: {tick, head, waiting, rate, soldout, departed...}
local rate = redis.call('HGET', K.cfg, 'rate')
if not rate then return {-1} end
local ewma = redis.call('HGET', K.rate, 'ewma') or rate
local head = tonumber(redis.call('GET', K.head)) or 0
local reply = {tonumber(redis.call('GET', K.tick)) or 0, head, redis.call('ZCARD', K.queue), ewma,
  redis.call('EXISTS', K.soldout)}
local dep = redis.call('ZRANGEBYSCORE', K.departed, '(' .. I(head), '+inf')
for i = 1, #dep do reply[#reply + 1] = tonumber(dep[i]) end
return reply
