-- stats.lua: a room's live counters in one round trip.
-- Reply: {seq, head, waiting, active, admitted, left, ewma, consumed, forfeited, tick, soldout}
local nowMs = math.floor(nowUs() / 1000)
local function num(key) return tonumber(redis.call('GET', P .. key)) or 0 end
return {
  num('seq'), num('head'), redis.call('ZCARD', P .. 'queue'),
  redis.call('ZCOUNT', P .. 'active', '(' .. I(nowMs), '+inf'),
  num('admitted'), num('left'), redis.call('HGET', P .. 'rate', 'ewma') or '',
  num('consumed'), num('forfeited'), num('tick'), redis.call('EXISTS', P .. 'soldout'),
}
