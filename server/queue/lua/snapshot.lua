-- snapshot.lua: what an instance needs to compute ranks in-process after it
-- (re)subscribes: the tick, the head and the departed tickets above it.
-- Reply: {tick, head, waiting, rate, soldout, departed...}
local rate = redis.call('HGET', KEYS[1], 'rate')
if not rate then return {-1} end
local ewma = redis.call('HGET', P .. 'rate', 'ewma') or rate
local head = tonumber(redis.call('GET', P .. 'head')) or 0
local reply = {tonumber(redis.call('GET', P .. 'tick')) or 0, head, redis.call('ZCARD', P .. 'queue'), ewma,
  redis.call('EXISTS', P .. 'soldout')}
local dep = redis.call('ZRANGEBYSCORE', P .. 'departed', '(' .. I(head), '+inf')
for i = 1, #dep do reply[#reply + 1] = tonumber(dep[i]) end
return reply
