-- KEYS: cfg powcur powprev
-- challenge_count.lua: counts a challenge issued to a client of a network
-- in the room, and answers the recent rates, over a sliding window made of
-- two fixed windows of ARGV[3] ms (the previous one weighted by the part of
-- it still inside the sliding window), by Redis TIME. Nothing is counted
-- when the room's challenge is off.
-- ARGV: 2 the client's network ('' if unknown), 3 the window, ms
-- Reply: {code, challenge mode, network rate, room rate} (rates per second,
--   as strings); code -1 unknown room, 1 otherwise
local mode = redis.call('HGET', K.cfg, 'challenge')
if not mode then
  if redis.call('EXISTS', K.cfg) == 0 then return {-1, '', '0', '0'} end
  mode = 'off'
end
if mode == '' or mode == 'off' then return {1, 'off', '0', '0'} end
local win = tonumber(ARGV[3])
local nowMs = math.floor(nowUs() / 1000)
local w = math.floor(nowMs / win)
local frac = (nowMs % win) / win
local cw = tonumber(redis.call('HGET', K.powcur, '#w'))
if cw ~= w then
  if cw == w - 1 then
    redis.call('RENAME', K.powcur, K.powprev)
  else
    redis.call('DEL', K.powcur, K.powprev)
  end
  redis.call('HSET', K.powcur, '#w', I(w))
  redis.call('PEXPIRE', K.powcur, 2 * win)
end
local function rate(field)
  local cur = redis.call('HINCRBY', K.powcur, field, 1)
  local prev = tonumber(redis.call('HGET', K.powprev, field)) or 0
  return string.format('%.3f', (prev * (1 - frac) + cur) * 1000 / win)
end
local net = '0'
if ARGV[2] ~= '' then net = rate('n' .. ARGV[2]) end
return {1, mode, net, rate('*')}
