-- KEYS: cfg soldout rate head tick tokens queue seq seen seenbase counts departed departing away awaytk back active
-- position.lua: a visitor's place, and (with ARGV[3] == "1") an atomic,
-- idempotent enter. Status is decided by the pass first, then the queue.
-- Being asked marks the visitor as seen. A visitor passed over while away
-- who asks is back: admitted first at the next tick. A waiting visitor
-- unseen for longer than the room's returnWithinSeconds has left, and an
-- enter puts them at the end.
-- ARGV: 2 visitor, 3 enter flag ("1" or "0")
-- Reply: {code, ticket, rank, waiting, token, ewma, rate, head, tick, soldout,
--   paused, passExpiresMs, rankUp, etaRate, slots}
--   code: -1 unknown room, 0 NOT_ENTERED, 1 WAITING, 2 READY
--   rankUp: 1 when this call put a lapsed visitor back at the end
-- A sold-out room takes nobody new into the line.
local cfg = redis.call('HMGET', K.cfg, 'rate', 'paused', 'maxActive', 'tokenTTLSeconds')
local now = nowUs()
local rate = cfg[1]
if not rate then return {-1, 0, 0, 0, '', '', '', 0, 0, 0, 0, 0, 0, '', ''} end
local soldout = redis.call('EXISTS', K.soldout)
local v = ARGV[2]
local ewma = redis.call('HGET', K.rate, 'ewma') or ''
local head = tonumber(redis.call('GET', K.head)) or 0
local tick = tonumber(redis.call('GET', K.tick)) or 0
-- ABSENCE: paused, and the throughput the ETA counts on.
local paused = cfg[2] == '1' and 1 or 0
local eta = string.format('%.4f', achievable(tonumber(rate), tonumber(cfg[3]) or 0, tonumber(cfg[4]) or 300))
local function slots() -- for a WAITING answer only: it costs up to 34 calls
  return slotSchedule(tonumber(rate), tonumber(cfg[3]) or 0, tonumber(cfg[4]) or 300, math.floor(now / 1000))
end
local pass = livePass(v, math.floor(now / 1000))
if pass then
  return {2, pass.n, 0, redis.call('ZCARD', K.queue), pass.t, ewma, rate, head, tick, soldout, paused, pass.x, 0, eta, ''}
end
-- ABSENCE: passed over while away, and now back (or already back).
local back = comeBack(v) or tonumber(redis.call('ZSCORE', K.back, v))
if back then
  return {1, back, redis.call('ZRANK', K.back, v), redis.call('ZCARD', K.queue), '', ewma, rate, head, tick, soldout,
    paused, 0, 0, eta, slots()}
end
local base = seenBase()
local ticket = tonumber(redis.call('ZSCORE', K.queue, v))
local rankUp = 0
if ticket and lapsed(ticket, now, abandonUs(), returnUs(), base) then
  depart(v, ticket, 'abandoned')
  ticket = nil
  rankUp = 1
end
if not ticket then
  if ARGV[3] ~= '1' or soldout == 1 then
    return {0, 0, 0, redis.call('ZCARD', K.queue), '', ewma, rate, head, tick, soldout, paused, 0, 0, eta, ''}
  end
  ticket = redis.call('INCR', K.seq)
  redis.call('ZADD', K.queue, ticket, v)
end
markSeen(ticket, now, base)
local rank = redis.call('ZRANK', K.queue, v)
return {1, ticket, rank, redis.call('ZCARD', K.queue), '', ewma, rate, head, tick, soldout, paused, 0, rankUp, eta, slots()}
