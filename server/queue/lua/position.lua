-- KEYS: cfg soldout rate head tick tokens queue seq seen seenbase counts departed departing draw prequeue withdrawn drawn nets
-- position.lua: a visitor's place, and (with ARGV[3] == "1") an atomic,
-- idempotent enter. Status is decided by the pass first, then the
-- pre-queue, then the queue.
-- Being asked marks the visitor as seen; a waiting visitor unseen for the
-- room's abandonAfterSeconds has left, and an enter puts them at the end.
-- ARGV: 2 visitor, 3 enter flag ("1" or "0"), 4 the client's network
--   ('' if unknown), counted per pre-queue entry
-- Reply: {code, ticket, rank, waiting, token, ewma, rate, head, tick,
--   soldout, phase, prequeueAt, opensAt, closesAt, nowMs, line}
--   code: -1 unknown room, 0 NOT_ENTERED, 1 WAITING, 2 READY, 3 PREQUEUED
--   ticket is the visitor's own number: the pre-queue ticket of a drawn
--   buyer, else the line number; line is the line number (ranks count it).
-- A sold-out room takes nobody new into the line; nor does a room before
-- its pre-queue or after its closing.
local rate = redis.call('HGET', K.cfg, 'rate')
if not rate then return {-1, 0, 0, 0, '', '', '', 0, 0, 0, '', 0, 0, 0, 0, 0} end
local soldout = redis.call('EXISTS', K.soldout)
local v = ARGV[2]
local ewma = redis.call('HGET', K.rate, 'ewma') or ''
local now = nowUs()
local nowMs = math.floor(now / 1000)
local ph, sc = phaseNow(nowMs)
local head = tonumber(redis.call('GET', K.head)) or 0
local tick = tonumber(redis.call('GET', K.tick)) or 0
local shown = ph
if ph == 'drawing' then shown = 'prequeue' end
local function reply(code, ticket, rank, waiting, token, line)
  return {code, ticket, rank, waiting, token, ewma, rate, head, tick, soldout, shown, sc[1], sc[2], sc[3], nowMs, line}
end
local pass = livePass(v, nowMs)
if pass then
  return reply(2, pass.n, 0, redis.call('ZCARD', K.queue), pass.t, pass.n)
end
-- The pre-queue: until the draw is done, its buyers have a ticket and no
-- rank. Withdrawn entries (left during the draw) no longer count.
if ph == 'prequeue' or ph == 'drawing' then
  local pt = tonumber(redis.call('ZSCORE', K.prequeue, v))
  if pt and not redis.call('ZSCORE', K.withdrawn, v) then
    return reply(3, pt, 0, redis.call('ZCARD', K.prequeue), '', 0)
  end
end
local base = seenBase()
local ticket = tonumber(redis.call('ZSCORE', K.queue, v))
if ticket and not alive(ticket, now, abandonUs(), base) then
  depart(v, ticket, 'abandoned')
  ticket = nil
end
if not ticket then
  if ARGV[3] ~= '1' or soldout == 1 or ph == 'scheduled' or ph == 'closed' then
    return reply(0, 0, 0, redis.call('ZCARD', K.queue), '', 0)
  end
  ticket = redis.call('INCR', K.seq)
  if ph == 'prequeue' then
    redis.call('ZADD', K.prequeue, ticket, v)
    if ARGV[4] and ARGV[4] ~= '' then redis.call('HINCRBY', K.nets, ARGV[4], 1) end
    return reply(3, ticket, 0, redis.call('ZCARD', K.prequeue), '', 0)
  end
  redis.call('ZADD', K.queue, ticket, v)
end
markSeen(ticket, now, base)
local rank = redis.call('ZRANK', K.queue, v)
if ph == 'drawing' then
  -- The drawn block is still being written: count it whole.
  rank = ticket - head - 1 - redis.call('ZCOUNT', K.departed, '(' .. I(head), '(' .. I(ticket))
end
-- A drawn buyer's own number is their pre-queue ticket, at their place in
-- the drawn list (4 bytes each).
local shownTicket = ticket
local d = redis.call('HMGET', K.draw, 'base', 'n')
local db, dn = tonumber(d[1]) or 0, tonumber(d[2]) or 0
if ticket > db and ticket <= db + dn then
  local b = redis.call('GETRANGE', K.drawn, 4 * (ticket - db - 1), 4 * (ticket - db) - 1)
  if #b == 4 then shownTicket = struct.unpack('>I4', b) end
end
return reply(1, shownTicket, rank, redis.call('ZCARD', K.queue), '', ticket)
