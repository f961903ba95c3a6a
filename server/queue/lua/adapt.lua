-- KEYS: cfg adapt adapthist rate
-- adapt.lua: applies one decision of the adaptive admission controller
-- (server/adapt) to a room, atomically: the room's rate, which admit.lua
-- reads, and the controller's state. Every instance's controller decides
-- once a second from what it read; this script takes a decision only if
-- nothing was applied since that read (the decision count n and the rate
-- are unchanged), the room is still adaptive (a manual rate change turns
-- it off), and at least minGapMs (by Redis TIME) passed since the last one:
-- N instances take one step, not N.
-- ARGV: 2 n read, 3 rate read, 4 new rate, 5 reason, 6 minGapMs, 7 p95 ms,
--   8 error rate, 9 samples, 10 the knee estimate to keep, 11 "1" for a cut
--   (its time is kept as cut), 12 the no-load p95 to keep, in microseconds
-- A decision that changes the rate, or whose reason differs from the last
-- one's, is also pushed on the room's history (adapthist, newest first, the
-- last 300: queue.AdaptHistoryLen) as "ms from to p95 err samples reason".
-- Reply: {applied (1 or 0), why not ("off", "stale", "early") or ""}
local cfg = redis.call('HMGET', K.cfg, 'adaptive', 'rate')
if cfg[1] ~= '1' then return {0, 'off'} end
local st = redis.call('HMGET', K.adapt, 'n', 'ms')
local n = tonumber(st[1]) or 0
if n ~= tonumber(ARGV[2]) or tonumber(cfg[2]) ~= tonumber(ARGV[3]) then return {0, 'stale'} end
local now = math.floor(nowUs() / 1000)
local last = tonumber(st[2]) or 0
if now - last < tonumber(ARGV[6]) then return {0, 'early'} end
if tonumber(ARGV[4]) ~= tonumber(ARGV[3]) then
  redis.call('HSET', K.cfg, 'rate', ARGV[4])
  wake() -- IDLE: the pages that follow a sleeping room see the new rate
end
local lastReason = redis.call('HGET', K.adapt, 'reason')
if tonumber(ARGV[4]) ~= tonumber(ARGV[3]) or lastReason ~= ARGV[5] then
  redis.call('LPUSH', K.adapthist, table.concat({I(now), ARGV[3], ARGV[4], ARGV[7], ARGV[8], ARGV[9], ARGV[5]}, ' '))
  redis.call('LTRIM', K.adapthist, 0, 299)
end
redis.call('HSET', K.adapt, 'n', I(n + 1), 'ms', I(now), 'reason', ARGV[5], 'from', ARGV[3], 'rate', ARGV[4],
  'p95', ARGV[7], 'err', ARGV[8], 'samples', ARGV[9], 'knee', ARGV[10], 'baseUs', ARGV[12])
if ARGV[11] == '1' then redis.call('HSET', K.adapt, 'cut', I(now)) end
return {1, ''}
