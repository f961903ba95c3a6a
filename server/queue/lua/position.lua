-- KEYS: cfg soldout rate head tick tokens queue seq seen seenbase counts departed departing
-- position.lua: a visitor's place, and (with ARGV[3] == "1") an atomic,
-- idempotent enter. Status is decided by the pass first, then the queue.
-- Being asked marks the visitor as seen; a waiting visitor unseen for the
-- room's abandonAfterSeconds has left, and an enter puts them at the end.
-- ARGV: 2 visitor, 3 enter flag ("1" or "0")
-- Reply: {code, ticket, rank, waiting, token, ewma, rate, head, tick, soldout}
--   code: -1 unknown room, 0 NOT_ENTERED, 1 WAITING, 2 READY
-- A sold-out room takes nobody new into the line.
local rate = redis.call('HGET', K.cfg, 'rate')
if not rate then return {-1, 0, 0, 0, '', '', '', 0, 0, 0} end
local soldout = redis.call('EXISTS', K.soldout)
local v = ARGV[2]
local ewma = redis.call('HGET', K.rate, 'ewma') or ''
local head = tonumber(redis.call('GET', K.head)) or 0
local tick = tonumber(redis.call('GET', K.tick)) or 0
local now = nowUs()
local pass = livePass(v, math.floor(now / 1000))
if pass then
  return {2, pass.n, 0, redis.call('ZCARD', K.queue), pass.t, ewma, rate, head, tick, soldout}
end
local base = seenBase()
local ticket = tonumber(redis.call('ZSCORE', K.queue, v))
if ticket and not alive(ticket, now, abandonUs(), base) then
  depart(v, ticket, 'abandoned')
  ticket = nil
end
if not ticket then
  if ARGV[3] ~= '1' or soldout == 1 then
    return {0, 0, 0, redis.call('ZCARD', K.queue), '', ewma, rate, head, tick, soldout}
  end
  ticket = redis.call('INCR', K.seq)
  redis.call('ZADD', K.queue, ticket, v)
end
markSeen(ticket, now, base)
local rank = redis.call('ZRANK', K.queue, v)
return {1, ticket, rank, redis.call('ZCARD', K.queue), '', ewma, rate, head, tick, soldout}
