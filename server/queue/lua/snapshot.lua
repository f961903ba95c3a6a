-- KEYS: cfg rate head tick queue soldout departed active sessions
-- snapshot.lua: what an instance needs to compute ranks in-process after it
-- (re)subscribes: the tick, the head and the departed tickets above it.
-- Reply: {tick, head, waiting, etaRate, soldout, paused, slots,
--   readySpreadMs (-1: the server's default), createdMs (0: unknown),
--   departed...}
local cfg = redis.call('HMGET', K.cfg, 'rate', 'paused', 'maxActive', 'tokenTTLSeconds', 'readySpreadMs', 'createdMs')
if not cfg[1] then return {-1} end
local slots = slotSchedule(tonumber(cfg[1]), tonumber(cfg[3]) or 0, tonumber(cfg[4]) or 300, math.floor(nowUs() / 1000))
-- ABSENCE: the ETA's throughput (see lib.lua), and paused.
local eta = string.format('%.4f', achievable(tonumber(cfg[1]), tonumber(cfg[3]) or 0, tonumber(cfg[4]) or 300))
local head = tonumber(redis.call('GET', K.head)) or 0
local reply = {tonumber(redis.call('GET', K.tick)) or 0, head, redis.call('ZCARD', K.queue), eta,
  redis.call('EXISTS', K.soldout), stopped(cfg[2], cfg[1]) and 1 or 0, slots, -- ADAPT: a rate of 0 is paused too
  tonumber(cfg[5]) or -1, tonumber(cfg[6]) or 0}
local dep = redis.call('ZRANGEBYSCORE', K.departed, '(' .. I(head), '+inf')
for i = 1, #dep do reply[#reply + 1] = tonumber(dep[i]) end
return reply
