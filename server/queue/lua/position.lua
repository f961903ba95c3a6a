-- KEYS: cfg soldout rate head tick tokens queue seq seen seenbase counts departed departing draw prequeue withdrawn drawn nets away awaytk back active camps attr campof camp campbase sessions powused powcur powprev
-- position.lua: a visitor's place, and (with ARGV[3] == "1") an atomic,
-- idempotent enter. Status is decided by the pass first, then the
-- pre-queue, then the queue.
-- Being asked marks the visitor as seen. A visitor passed over while away
-- who asks is back: admitted first at the next tick (ABSENCE). A waiting
-- visitor unseen for longer than the room's returnWithinSeconds has left,
-- and an enter puts them at the end.
-- ARGV: 2 visitor, 3 enter flag ("1" or "0"), 4 the client's network
--   ('' if unknown), counted per pre-queue entry, 5 the campaign key ('' when
--   direct), 6 the most campaigns kept apart, 7 the campaign's source and 8
--   the most campaigns of one source kept apart, counted per new ticket,
--   9 the proof of work's id ('' for none), 10 its expiry and 11 its
--   issue time (unix ms), 12 the server's default challenge (for a room
--   saved without one), 13 the join-rate window (ms; see
--   challenge_count.lua), 14 "1" when the proof must be unused (the
--   request has no cookie)
-- Reply: {code, ticket, rank, waiting, token, ewma, rate, head, tick,
--   soldout, phase, prequeueAt, opensAt, closesAt, nowMs, line,
--   paused, passExpiresMs, rankUp, etaRate, slots, proved, created}
--   code: -1 unknown room, 0 NOT_ENTERED, 1 WAITING, 2 READY, 3 PREQUEUED,
--   -2 a proof of work is needed (none given), -3 the proof was used before,
--   -4 the proof was issued before the room's current phase began
--   ticket is the visitor's own number: the pre-queue ticket of a drawn
--   buyer, else the line number; line is the line number (ranks count it).
--   rankUp: 1 when this call put a lapsed visitor back at the end.
--   proved: 1 when this call's proof of work made the place.
--   created: 1 when this call made a new place (ticket or pre-queue
--   entry), not a lapsed visitor put back at the end.
-- A sold-out room takes nobody new into the line; nor does a room before
-- its pre-queue or after its closing.
-- CHALLENGE: in a room whose challenge is not off, a new place (ticket or
-- pre-queue entry) takes a proof of work that was never used in the room
-- before, and that was issued in the current phase (in the pre-queue from
-- prequeueAt, else from opensAt: a proof banked before the opening, or in
-- the pre-queue, makes no place once the room opens); it is recorded in
-- powused until a while after its expiry, and counted as a proved join of
-- the room ('+' in powcur). A visitor who has a place, or who lapsed and
-- goes back at the end, needs none.
local cfg = redis.call('HMGET', K.cfg, 'rate', 'paused', 'maxActive', 'tokenTTLSeconds', 'challenge')
local rate = cfg[1]
if not rate then return {-1, 0, 0, 0, '', '', '', 0, 0, 0, '', 0, 0, 0, 0, 0, 0, 0, 0, '', '', 0, 0} end
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
-- ABSENCE: paused, and the throughput the ETA counts on; x carries a
-- pass's expiry, a rank going up and, for a WAITING answer only (it costs
-- up to 34 calls), when maxActive's slots free up.
local paused = stopped(cfg[2], rate) and 1 or 0 -- ADAPT: a rate of 0 too
local maxActive, ttl = tonumber(cfg[3]) or 0, tonumber(cfg[4]) or 300
local eta = string.format('%.4f', achievable(tonumber(rate), maxActive, ttl))
if admitsNone(ph, sc) then eta = '0' end -- no admissions: no honest ETA
local proved, created = 0, 0
local function reply(code, ticket, rank, waiting, token, line, x)
  x = x or {}
  local slots = ''
  if code == 1 then slots = slotSchedule(tonumber(rate), maxActive, ttl, nowMs) end
  return {code, ticket, rank, waiting, token, ewma, rate, head, tick, soldout, shown, sc[1], sc[2], sc[3], nowMs, line,
    paused, x.passX or 0, x.rankUp or 0, eta, slots, proved, created}
end
-- A proof brought by a request without a cookie (ARGV[14] == '1') must be
-- unused: replaying one never hands out the visitor it made.
if ARGV[14] == '1' and (ARGV[9] or '') ~= '' and redis.call('ZSCORE', K.powused, ARGV[9]) then
  return reply(-3, 0, 0, 0, '', 0)
end
local pass = livePass(v, nowMs)
if pass then
  return reply(2, pass.n, 0, redis.call('ZCARD', K.queue), pass.t, pass.n, {passX = pass.x})
end
-- ABSENCE: passed over while away, and now back (or already back).
local back = comeBack(v) or tonumber(redis.call('ZSCORE', K.back, v))
if back then
  return reply(1, back, redis.call('ZRANK', K.back, v), redis.call('ZCARD', K.queue), '', back)
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
local rankUp = 0
if ticket and lapsed(ticket, now, abandonUs(), returnUs(), base) then
  depart(v, ticket, 'abandoned')
  ticket = nil
  rankUp = 1
end
if not ticket then
  if ARGV[3] ~= '1' or soldout == 1 or ph == 'scheduled' or ph == 'closed' then
    return reply(0, 0, 0, redis.call('ZCARD', K.queue), '', 0)
  end
  if rankUp == 0 and challengeMode(cfg[5], ARGV[12]) ~= 'off' then
    local id = ARGV[9] or ''
    if id == '' then return reply(-2, 0, 0, 0, '', 0) end
    local since = sc[2]
    if ph == 'prequeue' then since = sc[1] end
    if since > 0 and (tonumber(ARGV[11]) or 0) < since then return reply(-4, 0, 0, 0, '', 0) end
    redis.call('ZREMRANGEBYSCORE', K.powused, '-inf', nowMs)
    if redis.call('ZSCORE', K.powused, id) then return reply(-3, 0, 0, 0, '', 0) end
    -- Kept a minute past its expiry, so that a clock behind Redis's
    -- cannot verify a proof whose record is gone.
    redis.call('ZADD', K.powused, I((tonumber(ARGV[10]) or nowMs) + 60000), id)
    proved = 1
    local win = tonumber(ARGV[13]) or 0
    if win > 0 then powRate('+', 1, powRoll(win, nowMs), win) end
  end
  ticket = redis.call('INCR', K.seq)
  if rankUp == 0 then created = 1 end
  joinCampaign(ticket, campBase(), ARGV[5] or '', tonumber(ARGV[6]) or 0, ARGV[7] or '', tonumber(ARGV[8]) or 0)
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
  if #b == 4 then shownTicket = u32(b, 1) end
end
return reply(1, shownTicket, rank, redis.call('ZCARD', K.queue), '', ticket, {rankUp = rankUp})
