-- stats.lua: a room's live counters in one round trip.
-- KEYS: 1 seq, 2 head, 3 queue, 4 active, 5 admitted, 6 left, 7 rate, 8 consumed, 9 forfeited
-- Reply: {seq, head, waiting, active, admitted, left, ewma, consumed, forfeited}
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {
  tonumber(redis.call('GET', KEYS[1])) or 0,
  tonumber(redis.call('GET', KEYS[2])) or 0,
  redis.call('ZCARD', KEYS[3]),
  redis.call('ZCOUNT', KEYS[4], '(' .. string.format('%.0f', nowMs), '+inf'),
  tonumber(redis.call('GET', KEYS[5])) or 0,
  tonumber(redis.call('GET', KEYS[6])) or 0,
  redis.call('HGET', KEYS[7], 'ewma') or '',
  tonumber(redis.call('GET', KEYS[8])) or 0,
  tonumber(redis.call('GET', KEYS[9])) or 0,
}
