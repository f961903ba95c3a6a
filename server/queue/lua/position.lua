-- KEYS: cfg soldout rate head* tick tokens queue* seq* seen* seenbase* counts departed* departing* draw prequeue withdrawn drawn nets away* awaytk* back* active camps attr campof camp* campbase* sessions powused powcur powprev pqline pqn ldrawn*
-- position.lua: the places of visitors of one room, and (with their enter
-- flag "1") their atomic, idempotent enters. Status is decided by the pass
-- first, then the pre-queue, then the queue.
-- Being asked marks the visitor as seen. A visitor passed over while away
-- who asks is back: admitted first at the next tick (ABSENCE). A waiting
-- visitor unseen for longer than the room's returnWithinSeconds has left,
-- and an enter puts them at the end.
-- ARGV: 2 the most campaigns kept apart, 3 the most campaigns of one
--   source kept apart, 4 the server's default challenge (for a room saved
--   without one), 5 the join-rate window (ms; see challenge_count.lua),
--   then, from 6, one group per visitor: its flags, the visitor, and what
--   the flags say follows, in this order (readGroup). Flags: "e" enter
--   (else only read the place), "m" the visitor's id was minted for this
--   enter (visitor.NewID: they have no pass, no place and no pre-queue
--   entry, and the script does not look for them), "f" the proof must be
--   unused (the request has no cookie), "n" the client's network follows
--   (counted per pre-queue entry), "c" the campaign key and its source
--   follow (counted per new ticket), "p" the proof of work's id, its
--   expiry and its issue time (unix ms) follow, "g" an access code was
--   redeemed for this enter, "i" the visitor is a verified identity's
--   (see ACCESS below), "o" the visitor has no access code to redeem:
--   in a room with a code line, a new place goes to a line open to all
--   only with it (else -7), "l" the name of the line the visitor's code
--   or identity puts them in follows (LINES). A minted visitor's group
--   is "emn", visitor, network: three arguments, not ten.
-- BATCH: the visitors are placed one after the other, in the
-- order given, as as many calls of the script one visitor at a time would
-- place them; the room's own state (its settings, schedule, head, ETA) is
-- read once for them all. server/queue gathers the enters of a room that
-- arrive while its last call runs into one call (batch.go).
-- Reply: {room, visitor...}: room is {known, ewma, rate, head, tick,
--   soldout, phase, prequeueAt, opensAt, closesAt, nowMs, paused, etaRate,
--   slots, sinceTickMs, tickMs}, known 1 (or -1 for an unknown room, with no visitor replies
--   following), then the visitors' replies, in their order: for one
--   visitor a string of "code ticket rank waiting line passExpiresMs
--   rankUp proved created lineIndex lineShare lineName token" (token ''
--   but for a pass; one string
--   rather than ten replies makes the reply cheap to read), and for a run
--   of m minted visitors who joined together (see joinRun) "R first
--   waiting m": the i-th of them (from 0) is WAITING with ticket (and
--   line) first + i, rank waiting - 1 + i of waiting + i, and made their
--   place. slots is '' unless a visitor is WAITING.
--   code: 0 NOT_ENTERED, 1 WAITING, 2 READY, 3 PREQUEUED,
--   -2 a proof of work is needed (none given), -3 the proof was used before,
--   -4 the proof was issued before the room's current phase began,
--   -5 the room's access takes a code (none redeemed), -6 the room
--   requires an identity (none verified), -7 a new place would go to a
--   line open to all in a room with a code line: the caller redeems the
--   visitor's code, if any, or says there is none ("o")
--   ticket is the visitor's own number: the pre-queue ticket of a drawn
--   buyer, else the line number; line is the line number (ranks count it).
--   rankUp: 1 when this call put a lapsed visitor back at the end.
--   proved: 1 when this call's proof of work made the place.
--   created: 1 when this call made a new place (ticket or pre-queue
--   entry), not a lapsed visitor put back at the end.
--   lineIndex: the visitor's line, from 0 (LINES; 0 in a room without
--   lines), and waiting counts that line; lineShare its part of the
--   room's throughput in millionths (see lineShare); lineName its name,
--   '-' for none (no lines, or no place in one).
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
local FIRST = 6
-- The room's state, in as few calls as it takes: its settings and schedule
-- in one HMGET, its counters (after a freeze at opening) in one MGET.
local cfg = redis.call('HMGET', K.cfg, 'rate', 'paused', 'maxActive', 'tokenTTLSeconds', 'challenge',
  'prequeueAt', 'opensAt', 'closesAt', 'serveLineAfterClose', 'mode', 'createdMs', 'access', 'identity', 'lines')
local rate = cfg[1]
if not rate then return {{-1}} end
local rs = redis.call('HMGET', K.rate, 'ewma', 'ts', 'tk', 'asleep')
local ewma = rs[1] or ''
local now = nowUs()
-- The ETA's tick phase: ms since the last tick of any instance (-1: none
-- yet), and the tick's length in ms (0: unknown).
local sinceTick = -1
if rs[2] then sinceTick = math.max(math.floor((now - tonumber(rs[2])) / 1000), 0) end
local tickMs = math.floor((tonumber(rs[3]) or 0) / 1000)
local nowMs = math.floor(now / 1000)
local ph, sc = phaseNow(nowMs, {cfg[6], cfg[7], cfg[8], cfg[9], cfg[10]})
local counters = redis.call('MGET', K.head, K.tick, K.seenbase, K.campbase, K.soldout)
local head, tick = tonumber(counters[1]) or 0, tonumber(counters[2]) or 0
local base, cbase = tonumber(counters[3]) or 0, tonumber(counters[4]) or 0 -- seenBase(), campBase()
local soldout = 0
if counters[5] then soldout = 1 end
local shown = ph
if ph == 'drawing' then shown = 'prequeue' end
-- ABSENCE: paused, and the throughput the ETA counts on; x carries a
-- pass's expiry, a rank going up and, for a WAITING answer only (it costs
-- up to 34 calls), when maxActive's slots free up.
local paused = stopped(cfg[2], rate) and 1 or 0 -- ADAPT: a rate of 0 too
local maxActive, ttl = tonumber(cfg[3]) or 0, tonumber(cfg[4]) or 300
local eta = string.format('%.4f', achievable(tonumber(rate), maxActive, ttl))
if admitsNone(ph, sc) then eta = '0' end -- no admissions: no honest ETA
local challenge = challengeMode(cfg[5], ARGV[4])
local needCode, needIdentity = cfg[12] == 'code', cfg[13] == 'required' -- ACCESS
-- LINES: a room with lines finds each visitor in the line they are in,
-- and puts a new one in the line their code or identity names, else in
-- the first line their credentials open (see chooseLine).
local lines = parseLines(cfg[14])
local maxCamps, maxPerSource, win = tonumber(ARGV[2]) or 0, tonumber(ARGV[3]) or 0, tonumber(ARGV[5]) or 0
-- BATCH: what only some answers need is read once, by the first that does;
-- no visitor's place changes it. Direct joins are counted once, at the end.
local abandon, ret, drawBase, drawN
local direct = 0
-- IDLE: the first join wakes a sleeping room (see wake).
local asleep = rs[4] ~= false and rs[4] ~= nil
local function wakeOnce()
  if asleep then
    asleep = false
    wake()
  end
end
local function lapsedNow(ticket)
  if not abandon then abandon, ret = abandonUs(), returnUs() end
  return lapsed(ticket, now, abandon, ret, base)
end
local function drawBlock()
  if not drawBase then
    local d = redis.call('HMGET', K.draw, 'base', 'n')
    drawBase, drawN = tonumber(d[1]) or 0, tonumber(d[2]) or 0
  end
  return drawBase, drawN
end

-- LINES: bindLine binds line i's keys, and its head and cell bases.
local bound = 1
local function bindLine(i)
  if i == bound then return end
  useLine(i)
  bound = i
  local c = redis.call('MGET', K.head, K.seenbase, K.campbase)
  head, base, cbase = tonumber(c[1]) or 0, tonumber(c[2]) or 0, tonumber(c[3]) or 0
end
local roomHead, roomBase, roomCBase = head, base, cbase
local function unbind()
  if bound == 1 then return end
  useLine(1)
  bound, head, base, cbase = 1, roomHead, roomBase, roomCBase
end
-- chooseLine returns the line (1-based) a new place of group g goes to,
-- or the refusal (-5, -6) when it can have none: the line g names, else
-- the first code line for a code, the first identity line for an
-- identity, the first open line. A visitor who may hold a code is asked
-- for it (-7) before they go to a line open to all.
local function chooseLine(g)
  local at
  for i, l in ipairs(lines) do
    if l.name == g.line then at = i end
  end
  local function first(access)
    for i, l in ipairs(lines) do
      if l.access == access then return i end
    end
  end
  if not at and g.granted then at = first('code') end
  if not at and g.identified then at = first('identity') end
  at = at or first('open')
  if not at then
    if first('code') then return -5 end
    return -6
  end
  local l = lines[at]
  if l.access == 'code' and not g.granted then return -5 end
  if l.access == 'open' and not g.granted and not g.noCode and first('code') then return -7 end
  if l.access == 'identity' and not g.identified then return -6 end
  return at
end

-- lineShare is line i's part of the room's throughput, in millionths:
-- its share among the lines with anyone waiting, itself counted, as
-- admit.lua splits it.
local shares
local function lineShare(i)
  if #lines == 0 then return 1000000 end
  shares = shares or lineShares(lines)
  return math.floor(1000000 * shares[i] + 0.5)
end

-- reply is one visitor's reply (see Reply above).
local function reply(code, ticket, rank, waiting, token, line, passX, rankUp, proved, created)
  local name = '-'
  if #lines > 0 and code > 0 and code ~= 2 then name = lines[bound].name end
  return string.format('%d %d %d %d %d %d %d %d %d %d %d %s %s', code, ticket, rank, waiting, line, passX, rankUp, proved,
    created, bound - 1, lineShare(bound), name, token)
end

-- place places the visitor of group g (see readGroup) and returns its
-- reply.
local function place(g)
  local v, net, campKey, campSrc, proofID = g.v, g.net, g.campKey, g.campSrc, g.proofID
  local proved, created = 0, 0
  -- A proof brought by a request without a cookie must be unused:
  -- replaying one never hands out the visitor it made.
  if g.fresh and proofID ~= '' and redis.call('ZSCORE', K.powused, proofID) then
    return reply(-3, 0, 0, 0, '', 0, 0, 0, proved, created)
  end
  local ticket
  if not g.minted then
    local pass = livePass(v, nowMs)
    if pass then
      return reply(2, pass.n, 0, redis.call('ZCARD', K.queue), pass.t, pass.n, pass.x, 0, proved, created)
    end
    -- LINES: the visitor's line is the one that holds them (line 1, the
    -- room's own keys, in a room without lines).
    for i = 1, math.max(#lines, 1) do
      bindLine(i)
      -- ABSENCE: passed over while away, and now back (or already back).
      local back = comeBack(v) or tonumber(redis.call('ZSCORE', K.back, v))
      if back then
        return reply(1, back, redis.call('ZRANK', K.back, v), redis.call('ZCARD', K.queue), '', back, 0, 0, proved, created)
      end
      -- The pre-queue: until the draw is done, its buyers have a ticket and
      -- no rank. Withdrawn entries (left during the draw) no longer count.
      if i == 1 and (ph == 'prequeue' or ph == 'drawing') then
        local pt = tonumber(redis.call('ZSCORE', K.prequeue, v))
        if pt and not redis.call('ZSCORE', K.withdrawn, v) then
          -- LINES: the entry's line, for its name (the keys stay the first's).
          if #lines > 0 then bound = (tonumber(redis.call('HGET', K.pqline, v)) or 0) + 1 end
          return reply(3, pt, 0, redis.call('ZCARD', K.prequeue), '', 0, 0, 0, proved, created)
        end
      end
      ticket = tonumber(redis.call('ZSCORE', K.queue, v))
      if ticket then break end
    end
    if not ticket then unbind() end
  end
  local rankUp, fresh = 0, false
  if ticket and lapsedNow(ticket) then
    depart(v, ticket, 'abandoned')
    ticket = nil
    rankUp = 1
  end
  if not ticket then
    if not g.enter or soldout == 1 or ph == 'scheduled' or ph == 'closed' then
      return reply(0, 0, 0, redis.call('ZCARD', K.queue), '', 0, 0, 0, proved, created)
    end
    -- The identity first: a visitor who cannot have a place redeems no code.
    if rankUp == 0 and needIdentity and not g.identified then return reply(-6, 0, 0, 0, '', 0, 0, 0, proved, created) end
    -- LINES: a pre-queue entry is the room's, numbered with the first
    -- line's keys, and its line is kept for the draw (pqline, pqn).
    local pqAt
    if rankUp == 0 and #lines > 0 then
      local at = chooseLine(g)
      if at < 0 then return reply(at, 0, 0, 0, '', 0, 0, 0, proved, created) end
      if ph == 'prequeue' then pqAt = at else bindLine(at) end
    end
    if rankUp == 0 and needCode and not g.granted then return reply(-5, 0, 0, 0, '', 0, 0, 0, proved, created) end
    if rankUp == 0 and challenge ~= 'off' then
      if proofID == '' then return reply(-2, 0, 0, 0, '', 0, 0, 0, proved, created) end
      local since = sc[2]
      if ph == 'prequeue' then since = sc[1] end
      if since > 0 and (tonumber(g.proofIssued) or 0) < since then return reply(-4, 0, 0, 0, '', 0, 0, 0, proved, created) end
      redis.call('ZREMRANGEBYSCORE', K.powused, '-inf', nowMs)
      if redis.call('ZSCORE', K.powused, proofID) then return reply(-3, 0, 0, 0, '', 0, 0, 0, proved, created) end
      -- Kept a minute past its expiry, so that a clock behind Redis's
      -- cannot verify a proof whose record is gone.
      redis.call('ZADD', K.powused, I((tonumber(g.proofExpires) or nowMs) + 60000), proofID)
      proved = 1
      if win > 0 then powRate('+', 1, powRoll(win, nowMs), win) end
    end
    ticket = redis.call('INCR', K.seq)
    fresh = true
    if rankUp == 0 then created = 1 end
    if campKey == '' then
      direct = direct + 1 -- joinCampaign's count of a direct join, made once for the batch
    else
      joinCampaign(ticket, cbase, campKey, maxCamps, campSrc, maxPerSource)
    end
    wakeOnce()
    if ph == 'prequeue' then
      redis.call('ZADD', K.prequeue, ticket, v)
      if net ~= '' then redis.call('HINCRBY', K.nets, net, 1) end
      if pqAt and pqAt > 1 then
        redis.call('HSET', K.pqline, v, I(pqAt - 1))
        redis.call('HINCRBY', K.pqn, I(pqAt - 1), 1)
      end
      if pqAt then bound = pqAt end -- its name in the reply
      return reply(3, ticket, 0, redis.call('ZCARD', K.prequeue), '', 0, 0, 0, proved, created)
    end
    redis.call('ZADD', K.queue, ticket, v)
  end
  markSeen(ticket, now, base)
  local n = redis.call('ZCARD', K.queue)
  local rank
  if fresh then
    rank = n - 1 -- a new ticket is the counter's highest: the last in line
  else
    rank = redis.call('ZRANK', K.queue, v)
  end
  if ph == 'drawing' then
    -- The drawn block is still being written: count it whole.
    rank = ticket - head - 1 - redis.call('ZCOUNT', K.departed, '(' .. I(head), '(' .. I(ticket))
  end
  -- A drawn buyer's own number is their pre-queue ticket, at their place in
  -- the drawn list (4 bytes each); in a room with lines, in their line's
  -- (ldrawn), at their number in the line's block.
  local shownTicket = ticket
  local db, dn = drawBlock()
  local list = K.drawn
  if #lines > 0 then
    local f = {'base', 'n0'}
    if bound > 1 then f = {'b' .. (bound - 1), 'n' .. (bound - 1)} end
    local d = redis.call('HMGET', K.draw, f[1], f[2])
    db, dn, list = tonumber(d[1]) or 0, tonumber(d[2]) or 0, K.ldrawn
  end
  if ticket > db and ticket <= db + dn then
    local b = redis.call('GETRANGE', list, 4 * (ticket - db - 1), 4 * (ticket - db) - 1)
    -- 0: the draw has not written this place yet (draw_chunk.lua).
    if #b == 4 and b ~= '\0\0\0\0' then shownTicket = u32(b, 1) end
  end
  return reply(1, shownTicket, rank, n, '', ticket, 0, rankUp, proved, created)
end

-- readGroup reads the visitor group at ARGV[a] (see ARGV above) and
-- returns it, and where the next one starts.
local function readGroup(a)
  local f = ARGV[a]
  local g = {v = ARGV[a + 1], net = '', campKey = '', campSrc = '', proofID = '',
    enter = string.find(f, 'e', 1, true) ~= nil, minted = string.find(f, 'm', 1, true) ~= nil,
    fresh = string.find(f, 'f', 1, true) ~= nil, granted = string.find(f, 'g', 1, true) ~= nil,
    identified = string.find(f, 'i', 1, true) ~= nil, noCode = string.find(f, 'o', 1, true) ~= nil, line = ''}
  local i = a + 2
  if string.find(f, 'n', 1, true) then g.net, i = ARGV[i], i + 1 end
  if string.find(f, 'c', 1, true) then g.campKey, g.campSrc, i = ARGV[i], ARGV[i + 1], i + 2 end
  if string.find(f, 'p', 1, true) then g.proofID, g.proofExpires, g.proofIssued, i = ARGV[i], ARGV[i + 1], ARGV[i + 2], i + 3 end
  if string.find(f, 'l', 1, true) then g.line, i = ARGV[i], i + 1 end
  return g, i
end

-- BATCH: a run of visitors minted for their enter, in an open room that is
-- not sold out and asks no proof, all join at the end: the run takes its
-- tickets with one INCRBY, joins with one ZADD and is marked seen with one
-- SETRANGE (its tickets are consecutive), exactly as placing them one by
-- one would. Its reply is one string for the whole run (see Reply above).
local runs = ph == 'open' and soldout ~= 1 and challenge == 'off' and not needCode and not needIdentity and #lines == 0
-- The run so far: its visitors, and their campaign keys and sources ('' when
-- direct).
local runV, runC, runS = {}, {}, {}
local function joinRun()
  local m = #runV
  local first = redis.call('INCRBY', K.seq, m) - m + 1
  local z = {}
  for i = 1, m do
    local t = first + i - 1
    z[2 * i - 1], z[2 * i] = t, runV[i]
    if runC[i] == '' then
      direct = direct + 1
    else
      joinCampaign(t, cbase, runC[i], maxCamps, runS[i], maxPerSource)
    end
  end
  redis.call('ZADD', K.queue, unpack(z))
  wakeOnce()
  if first > base then
    local v = seenValue(now)
    redis.call('SETRANGE', K.seen, 2 * (first - base), string.rep(string.char(math.floor(v / 256), v % 256), m))
  end
  local n = redis.call('ZCARD', K.queue)
  runV, runC, runS = {}, {}, {}
  return 'R ' .. I(first) .. ' ' .. I(n - m + 1) .. ' ' .. I(m)
end

local out = {{}}
local anyWaiting = false
local a = FIRST
while a <= #ARGV do
  local f = ARGV[a]
  if runs and (f == 'emn' or f == 'em') then
    -- The common case, read without readGroup: a direct minted visitor.
    runV[#runV + 1], runC[#runC + 1], runS[#runS + 1] = ARGV[a + 1], '', ''
    a = a + #f
  else
    local g
    g, a = readGroup(a)
    if runs and g.enter and g.minted and g.proofID == '' then
      runV[#runV + 1], runC[#runC + 1], runS[#runS + 1] = g.v, g.campKey, g.campSrc
    else
      if #runV > 0 then
        out[#out + 1], anyWaiting = joinRun(), true
      end
      local r = place(g)
      unbind()
      if string.sub(r, 1, 2) == '1 ' then anyWaiting = true end
      out[#out + 1] = r
    end
  end
end
if #runV > 0 then
  out[#out + 1], anyWaiting = joinRun(), true
end
if direct > 0 then redis.call('HINCRBY', K.attr, 'j0', direct) end
local slots = ''
if anyWaiting then slots = slotSchedule(tonumber(rate), maxActive, ttl, nowMs) end
out[1] = {1, ewma, rate, head, tick, soldout, shown, sc[1], sc[2], sc[3], nowMs, paused, eta, slots, sinceTick, tickMs,
  tonumber(cfg[11]) or 0}
return out
