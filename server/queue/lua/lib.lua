-- lib.lua is prepended to every script, after a prelude that binds K.<name>
-- to the keys the script declares in its "-- KEYS:" header (reading an
-- undeclared one is an error). ARGV[1] is the room's events channel. All of
-- a room's keys share its hash tag.
local CHANNEL = ARGV[1]
local function I(x) return string.format('%.0f', x) end
-- u32 reads the big-endian 4-byte number at byte at of s by hand: the
-- embedded Redis of `make run` has no struct library.
local function u32(s, at)
  local a, b, c, d = string.byte(s, at, at + 3)
  return ((a * 256 + b) * 256 + c) * 256 + d
end
-- ADAPT: a rate of 0 (adaptive admission down to a minRate of
-- 0) stops admission as a pause does, and says so: the pages show paused,
-- with no ETA. Only an adaptive room can have a rate of 0.
local function stopped(pausedField, rate)
  return pausedField == '1' or (tonumber(rate) or 1) <= 0
end
-- nowUs is the time in microseconds: the engine's clock when it passed one
-- (CLOCK_US, bound by the prelude), else Redis' own TIME, which every
-- instance shares.
local function nowUs()
  if CLOCK_US then return CLOCK_US end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- IDLE: a room with nobody in line or pre-queue, no pass, session or
-- tombstone held and nothing left to sweep sleeps: admit.lua marks it
-- ('asleep' and 'wakeAt', its schedule's next change in ms or 0, in
-- K.rate), and the issuers leave it until wakeAt or until it is woken.
-- wake clears the mark and tells every instance, once, with the message
-- 'wake' on the room's channel.
local function wake()
  if redis.call('HDEL', K.rate, 'asleep', 'wakeAt') > 0 then redis.call('PUBLISH', CHANNEL, 'wake') end
end

-- Liveness: K.seen holds a 2-byte cell per ticket above K.seenbase, at
-- offset 2*(ticket - base), with the 2 s epoch in which its visitor was last
-- seen (mod 65535, plus 1; 0 means unknown). 2 bytes per ticket keeps a
-- waiting visitor small; admit.lua drops the cells behind the head, so the
-- string stays as long as the line, not as the room's history.
local EPOCH_US = 2000000
local function seenValue(now) return math.floor(now / EPOCH_US) % 65535 + 1 end
local function seenBase() return tonumber(redis.call('GET', K.seenbase)) or 0 end
local function markSeen(ticket, now, base)
  if ticket <= base then return end
  local v = seenValue(now)
  redis.call('SETRANGE', K.seen, 2 * (ticket - base), string.char(math.floor(v / 256), v % 256))
end
local function alive(ticket, now, abandonUs, base)
  if abandonUs <= 0 or ticket <= base then return true end
  local off = 2 * (ticket - base)
  local b = redis.call('GETRANGE', K.seen, off, off + 1)
  if #b < 2 then return true end
  local v = string.byte(b, 1) * 256 + string.byte(b, 2)
  if v == 0 then return true end
  return ((seenValue(now) - v) % 65535) * EPOCH_US <= abandonUs
end
local function abandonUs()
  return (tonumber(redis.call('HGET', K.cfg, 'abandonAfterSeconds')) or 0) * 1000000
end

-- ATTRIBUTION: K.camp holds a 2-byte cell per ticket above
-- K.campbase, laid out like K.seen and dropped behind the head like it
-- (admit.lua), with the short id of the campaign its visitor joined by; 0
-- (or no cell) is direct. A cell instead of a hash entry per visitor keeps
-- a waiting visitor within 200 bytes. Its base is its own, so that an
-- instance of a version without cells, dropping K.seen's, cannot shift it.
local function campBase() return tonumber(redis.call('GET', K.campbase)) or 0 end
local function setCampaignAt(ticket, id, base)
  if ticket <= base or id == 0 then return end
  redis.call('SETRANGE', K.camp, 2 * (ticket - base), string.char(math.floor(id / 256), id % 256))
end
local function campaignAt(ticket, base)
  if ticket <= base then return 0 end
  local off = 2 * (ticket - base)
  local b = redis.call('GETRANGE', K.camp, off, off + 1)
  if #b < 2 then return 0 end
  return string.byte(b, 1) * 256 + string.byte(b, 2)
end

-- ABSENCE begin: absence never costs a place.
-- A waiting visitor unseen for more than abandonAfterSeconds is away; one
-- unseen for more than returnWithinSeconds has lapsed. The hub marks each
-- connected visitor seen every 30 s and a poll marks it at every poll, so
-- abandonAfterSeconds (at least 60 s: two seen periods) is the presence
-- threshold. unseenUs returns how long ago ticket's visitor was seen, in
-- microseconds, or -1 when unknown.
local function unseenUs(ticket, now, base)
  if ticket <= base then return -1 end
  local off = 2 * (ticket - base)
  local b = redis.call('GETRANGE', K.seen, off, off + 1)
  if #b < 2 then return -1 end
  local v = string.byte(b, 1) * 256 + string.byte(b, 2)
  if v == 0 then return -1 end
  return ((seenValue(now) - v) % 65535) * EPOCH_US
end
local function returnUs()
  return (tonumber(redis.call('HGET', K.cfg, 'returnWithinSeconds')) or 900) * 1000000
end
-- lapsed reports a waiting ticket whose visitor has been gone longer than
-- the return window (never when abandonAfterSeconds is 0).
local function lapsed(ticket, now, abandon, ret, base)
  if abandon <= 0 then return false end
  return unseenUs(ticket, now, base) > ret
end
-- Passed-over visitors wait in K.away (visitor -> the ms their return
-- window ends) with their ticket in K.awaytk; one who comes back moves to
-- K.back (visitor -> ticket), which admit.lua serves first, inside the
-- rate. Their tickets are behind the head: nobody's rank counts them.
local function passOver(v, ticket, deadlineMs, base)
  -- ATTRIBUTION: the ticket's cell goes with the head; the id moves aside.
  local id = campaignAt(ticket, base)
  if id ~= 0 then redis.call('HSET', K.campof, v, I(id)) end
  redis.call('ZADD', K.away, I(deadlineMs), v)
  redis.call('HSET', K.awaytk, v, I(ticket))
  redis.call('HINCRBY', K.counts, 'passedOver', 1)
end
-- comeBack moves v from K.away to K.back and returns its ticket, or nil
-- when v is not away.
local function comeBack(v)
  local t = tonumber(redis.call('HGET', K.awaytk, v))
  if not t then return nil end
  redis.call('ZREM', K.away, v)
  redis.call('HDEL', K.awaytk, v)
  redis.call('ZADD', K.back, I(t), v)
  redis.call('HINCRBY', K.counts, 'returned', 1)
  return t
end
-- ETA: the throughput a waiting visitor can count on is the rate, or, when
-- maxActive binds, the rate at which slots free up: by Little's law,
-- maxActive / the mean time a pass holds its slot. That mean is an EWMA
-- over slot releases (K.rate 'hold', seconds); until one is measured a
-- pass is taken to hold its slot for its whole TTL, or, in a room that
-- hands its passes to a shop (GATE), for the session it opens there.
local function noteHolds(n, totalMs)
  if n <= 0 then return end
  redis.call('HINCRBY', K.rate, 'holdn', n)
  redis.call('HINCRBY', K.rate, 'holdms', math.floor(totalMs))
end
local function meanHold(ttl)
  local h = tonumber(redis.call('HGET', K.rate, 'hold'))
  if h then return h end
  local g = redis.call('HMGET', K.cfg, 'gateOn', 'sessionSeconds')
  if g[1] == '1' then return tonumber(g[2]) or ttl end
  return ttl
end
local function achievable(rate, maxActive, ttl)
  if maxActive <= 0 then return rate end
  local hold = meanHold(ttl)
  if hold < 0.05 then hold = 0.05 end
  return math.min(rate, maxActive / hold)
end
-- GATE: passes handed to an outside shop, and the sessions
-- they open there. K.jtis maps a pass id (jti) to "visitor token" and
-- K.jtiof a visitor to their pass id: one jti per pass, gone with the pass
-- (or its tombstone). A session holds a slot as the member SESSION..id of
-- K.active, scored with its expiry in ms; K.sessions maps id to "startedMs
-- heldSinceMs subject jti" (heldSince: when its pass took the slot; jti:
-- the pass id that opened it, so that a retry of that redeem finds it).
local SESSION = 's:'
local function isSession(m) return string.sub(m, 1, 2) == SESSION end
-- forgetJtis drops the pass ids of visitors vs (at most a sweep's batch),
-- whose passes are gone or replaced.
local function forgetJtis(vs)
  if #vs == 0 then return end
  local js = redis.call('HMGET', K.jtiof, unpack(vs))
  local dead = {}
  for i = 1, #vs do if js[i] then dead[#dead + 1] = js[i] end end
  if #dead > 0 then
    redis.call('HDEL', K.jtis, unpack(dead))
    redis.call('HDEL', K.jtiof, unpack(vs))
  end
end
local function getSession(id)
  local raw = redis.call('HGET', K.sessions, id)
  if not raw then return nil end
  local st, h, sub, j = string.match(raw, '^(%d+) (%d+) (%S+) (%S+)$')
  if not st then
    -- A session opened before sessions named their pass id.
    st, h, sub = string.match(raw, '^(%d+) (%d+) (%S+)$')
    if not st then return nil end
  end
  return {s = tonumber(st), h = tonumber(h), sub = sub, j = j}
end
-- dropSession ends session id, whose slot was free from endMs on, and
-- counts it under why ('sessionsEnded' or 'sessionsIdle'); the ETA learns
-- how long its slot was really held.
local function dropSession(id, endMs, why)
  local se = getSession(id)
  redis.call('HDEL', K.sessions, id)
  redis.call('ZREM', K.active, SESSION .. id)
  redis.call('HINCRBY', K.counts, why, 1)
  if se then noteHolds(1, math.max(0, endMs - se.h)) end
end
-- sessionConf returns the room's session length in seconds and its mode.
local function sessionConf()
  local c = redis.call('HMGET', K.cfg, 'sessionSeconds', 'sessionMode')
  return tonumber(c[1]) or 600, c[2] or 'idle'
end
-- STALE_SAMPLE bounds the stale members staleMembers reads.
local STALE_SAMPLE = 1000
-- staleMembers counts the members of K.active past their expiry that
-- admit.lua has not swept yet: passes, and sessions. The total is exact
-- (ZCOUNT); the split reads at most STALE_SAMPLE of them and scales, so
-- that a stalled admission loop cannot make the stats O(n).
local function staleMembers(nowMs)
  local total = redis.call('ZCOUNT', K.active, '-inf', I(nowMs))
  if total == 0 then return 0, 0 end
  local st = redis.call('ZRANGEBYSCORE', K.active, '-inf', I(nowMs), 'LIMIT', 0, STALE_SAMPLE)
  local n = 0
  for i = 1, #st do if isSession(st[i]) then n = n + 1 end end
  if #st < total then n = math.floor(n * total / #st + 0.5) end
  return total - n, n
end
-- slotFreesAt estimates when the slot of active member m (score x) frees,
-- in ms: a pass after the mean hold time from its admission (at most its
-- TTL). A session (GATE) by this model, hold being the mean hold time
-- (measured, or sessionSeconds until a release is measured):
--   1. it holds the slot for hold from when its pass took it (h);
--   2. a session that has already held it that long is not about to free
--      (it is in use): it is taken to hold it for another mean hold from
--      now, as a hold with no memory of its age would;
--   3. in a fixed session, x is its end: never later than x;
--   4. an idle session's x is only its current expiry: activity keeps
--      pushing it, so x is no bound; but it frees no sooner than x unless
--      the shop ends it (which a measured hold tells): no sooner than x
--      or a mean hold from now, whichever comes first.
-- Reading x as when a session frees would tell those still waiting that
-- slots held by renewed sessions free at once.
local function slotFreesAt(m, x, ttl, hold, nowMs, mode)
  if not isSession(m) then return x - ttl * 1000 + hold * 1000 end
  local se = getSession(string.sub(m, 3))
  if not se then return x end
  local t = se.h + hold * 1000
  if t <= nowMs then t = nowMs + hold * 1000 end
  if mode == 'fixed' then return math.min(x, t) end
  return math.max(t, math.min(x, nowMs + hold * 1000))
end
-- slotSchedule describes, as JSON, when maxActive's slots free up, so that
-- the ETA of any rank follows the real release times (a wave of passes
-- admitted together frees together): up to 32 samples, evenly spaced over
-- the maxActive slots sorted by when they free, in ms after nowMs. A slot
-- frees when its pass has held it for the mean hold time (at most its TTL),
-- or as slotFreesAt tells for a session; free slots come first. '' when maxActive is 0 (the rate alone binds).
local function slotSchedule(rate, maxActive, ttl, nowMs)
  if maxActive <= 0 then return '' end
  local hold = meanHold(ttl)
  local stale = redis.call('ZCOUNT', K.active, '-inf', I(nowMs))
  local live = redis.call('ZCARD', K.active) - stale
  local q = math.min(maxActive, 32)
  local _, mode = sessionConf()
  local f = {}
  for i = 0, q - 1 do
    local k = math.floor(i * maxActive / q) - (maxActive - live)
    local v = 0
    if k >= 0 then
      local e = redis.call('ZRANGE', K.active, stale + k, stale + k, 'WITHSCORES')
      if e[2] then v = math.max(0, slotFreesAt(e[1], tonumber(e[2]), ttl, hold, nowMs, mode) - nowMs) end
    end
    f[#f + 1] = v
  end
  -- GATE: sessions free by another rule than passes: keep the samples sorted.
  table.sort(f)
  for i = 1, #f do f[i] = I(f[i]) end
  return '{"q":' .. string.format('%.4f', rate) .. ',"A":' .. I(maxActive) .. ',"H":' .. string.format('%.3f', hold) ..
    ',"f":[' .. table.concat(f, ',') .. ']}'
end
-- ABSENCE end.

-- ATTRIBUTION: a new ticket counts a join for its campaign (c,
-- '' when direct) and, unless direct, writes the campaign's short id in
-- the ticket's cell (K.camp); admission counts it for that id. K.camps
-- maps at most cap campaigns to ids (1, 2, ...), and at most perSource of
-- one source (src; K.attr 's<source>' counts a source's campaigns, so at
-- most cap fields); later campaigns count under OTHER.
local OTHER = '(other)'
local function joinCampaign(ticket, base, c, cap, src, perSource)
  local id = '0'
  if c ~= '' then
    id = redis.call('HGET', K.camps, c)
    if not id and c ~= OTHER then
      if redis.call('HLEN', K.camps) >= cap or (tonumber(redis.call('HGET', K.attr, 's' .. src)) or 0) >= perSource then
        c = OTHER
        id = redis.call('HGET', K.camps, c)
      else
        redis.call('HINCRBY', K.attr, 's' .. src, 1)
      end
    end
    if not id then
      id = I(redis.call('HINCRBY', K.attr, 'next', 1))
      redis.call('HSET', K.camps, c, id)
    end
    setCampaignAt(ticket, tonumber(id), base)
  end
  redis.call('HINCRBY', K.attr, 'j' .. id, 1)
end
-- admitCampaign counts v's admission (ticket's): K.campof holds the id of
-- a visitor passed over while away (and of one who joined through a
-- version that kept every campaign visitor there), else the ticket's cell.
local function admitCampaign(v, ticket, base)
  local id = redis.call('HGET', K.campof, v)
  if id then redis.call('HDEL', K.campof, v) else id = I(campaignAt(ticket, base)) end
  redis.call('HINCRBY', K.attr, 'a' .. id, 1)
end

-- depart takes a waiting ticket out of the line and records it, so that
-- every instance can lower the ranks behind it at the next tick. why is
-- the counter it goes to: 'leaves' (the visitor left) or 'abandoned' (not
-- seen for abandonAfterSeconds).
local function depart(visitor, ticket, why)
  redis.call('ZREM', K.queue, visitor)
  redis.call('HDEL', K.campof, visitor) -- ATTRIBUTION: never admitted (an entry of the version before cells)
  redis.call('HINCRBY', K.counts, why, 1)
  redis.call('ZADD', K.departed, I(ticket), I(ticket))
  redis.call('RPUSH', K.departing, I(ticket))
end

-- leaveLine takes v out of the line: the pre-queue, the line itself, or
-- the side list of those passed over while away, counted as a leave.
-- It reports whether v was in any of them.
local function leaveLine(v)
  -- DRAW: leaving the pre-queue. Before the draw the entry goes. During it
  -- the pre-queue stays as frozen, so that every instance draws the same
  -- order: the entry is withdrawn, and its place in the drawn block departs.
  local pt = redis.call('ZSCORE', K.prequeue, v)
  if pt and not redis.call('ZSCORE', K.withdrawn, v) then
    local st = redis.call('HGET', K.draw, 'state')
    -- LINES: the entry's line (none: the first).
    local pl = tonumber(redis.call('HGET', K.pqline, v))
    if not st then
      redis.call('ZREM', K.prequeue, v)
      redis.call('HDEL', K.campof, v) -- ATTRIBUTION
      redis.call('HINCRBY', K.counts, 'leaves', 1)
      if pl then
        redis.call('HDEL', K.pqline, v)
        redis.call('HINCRBY', K.pqn, I(pl), -1)
      end
      return true
    elseif st == 'drawing' then
      redis.call('ZADD', K.withdrawn, pt, v)
      if pl then useLine(pl + 1) end
      local s = redis.call('ZSCORE', K.queue, v)
      if s then depart(v, tonumber(s), 'leaves') else
        redis.call('HDEL', K.campof, v) -- ATTRIBUTION
        redis.call('HINCRBY', K.counts, 'leaves', 1)
      end
      return true
    end
  end
  local s = redis.call('ZSCORE', K.queue, v)
  if s then
    depart(v, tonumber(s), 'leaves')
    return true
  end
  -- ABSENCE: a passed-over visitor's ticket is behind the head already, so
  -- nobody's rank changes; only the count does.
  if redis.call('ZREM', K.away, v) + redis.call('HDEL', K.awaytk, v) + redis.call('ZREM', K.back, v) > 0 then
    redis.call('HDEL', K.campof, v) -- ATTRIBUTION
    redis.call('HINCRBY', K.counts, 'leaves', 1)
    return true
  end
  return false
end

-- LINES: a room's lines, from its cfg field 'lines' ("name share
-- access|..."), in order: line i (1-based) has the keys useLine(i) binds
-- (line 1 the room's own). A room without lines has none, and one line.
local function parseLines(s)
  local ls = {}
  if not s or s == '' then return ls end
  for name, share, access in string.gmatch(s, '([^ |]+) ([^ |]+) ([^ |]+)') do
    ls[#ls + 1] = {name = name, share = tonumber(share) or 0, access = access}
  end
  return ls
end
-- lineShares returns each line's part of the room's throughput (0 to 1):
-- its share among the lines with anyone waiting, itself counted, as
-- admit.lua splits it.
local function lineShares(lines)
  local sum, has, out = 0, {}, {}
  for j = 1, #lines do
    has[j] = redis.call('ZCARD', LK[j].queue) + redis.call('ZCARD', LK[j].back) > 0
    if has[j] then sum = sum + lines[j].share end
  end
  for j = 1, #lines do
    local s = sum
    if not has[j] then s = s + lines[j].share end
    out[j] = 0
    if s > 0 then out[j] = lines[j].share / s end
  end
  return out
end
-- leaveLines is leaveLine in a room of nl lines, trying each line's keys;
-- the room's own are bound again after it.
local function leaveLines(v, nl)
  local left = false
  for i = 1, nl do
    useLine(i)
    left = leaveLine(v)
    if left then break end
  end
  useLine(1)
  return left
end

-- Passes: K.tokens maps a visitor to "token state ticket expiryMs
-- claimDeadlineMs holder fails pausedUntilMs". state is R (READY), C
-- (CLAIMED by holder until claimDeadlineMs) or U (used: a tombstone, so
-- that a replay is told the token placed its order). A pass is logically
-- gone at expiryMs whatever Redis still holds; admit.lua sweeps it.
local function getPass(v)
  local raw = redis.call('HGET', K.tokens, v)
  if not raw then return nil end
  local t, s, n, x, c, h, f, p = string.match(raw, '^(%S+) (%S) (%d+) (%d+) (%d+) (%S+) (%d+) (%d+)$')
  if not t then return nil end
  return {t = t, s = s, n = tonumber(n), x = tonumber(x), c = tonumber(c), h = h, f = tonumber(f), p = tonumber(p)}
end
local function putPass(v, e)
  redis.call('HSET', K.tokens, v, e.t .. ' ' .. e.s .. ' ' .. I(e.n) .. ' ' .. I(e.x) .. ' ' .. I(e.c) .. ' ' ..
    e.h .. ' ' .. I(e.f) .. ' ' .. I(e.p))
end
-- livePass returns v's pass when it is usable (READY or CLAIMED, not
-- expired), else nil.
local function livePass(v, nowMs)
  local e = getPass(v)
  if not e or e.s == 'U' or e.x <= nowMs then return nil end
  return e
end
-- sameToken compares through SHA-1 digests, so the comparison leaks
-- nothing usable.
local function sameToken(a, b) return redis.sha1hex(a) == redis.sha1hex(b) end

-- DRAW: the schedule. Scripts that call these declare cfg and draw (and,
-- for freeze, seq head seen seenbase prequeue). The cfg holds prequeueAt,
-- opensAt and closesAt in unix ms ('' when unset); K.draw holds the draw's
-- state: nil (not frozen), 'drawing' or 'done', and base (the last
-- pre-queue ticket) and n (the pre-queue's size) once frozen. A pre-queue
-- ticket is at most base; the drawn buyer at place i (1-based) holds line
-- number base + i; later joiners hold line numbers above base + n.
local function msOf(v) return tonumber(v) or 0 end
-- phase returns 'scheduled', 'prequeue', 'drawing' (past opensAt, draw not
-- done), 'open' or 'closed', and the schedule {prequeueAt, opensAt,
-- closesAt, serveLineAfterClose, mode}.
-- c, when given, is those five fields of the cfg as a caller read them
-- (position.lua reads them with its own).
local function phase(nowMs, c)
  c = c or redis.call('HMGET', K.cfg, 'prequeueAt', 'opensAt', 'closesAt', 'serveLineAfterClose', 'mode')
  local sc = {msOf(c[1]), msOf(c[2]), msOf(c[3]), c[4] ~= '0', c[5] or 'fifo'}
  if sc[5] == 'closed' or (sc[3] > 0 and nowMs >= sc[3]) then return 'closed', sc end
  if sc[2] > 0 and nowMs < sc[2] then
    if sc[1] > 0 and nowMs >= sc[1] then return 'prequeue', sc end
    return 'scheduled', sc
  end
  if sc[2] > 0 and redis.call('HGET', K.draw, 'state') ~= 'done' then return 'drawing', sc end
  return 'open', sc
end
-- freeze closes the pre-queue at opening, once: the line numbers base+1 ..
-- base+n are kept for the drawn block, the head moves to base so that
-- ranks count from it, and later joiners take numbers above the block. An
-- empty pre-queue needs no draw.
-- LINES: in a room with lines each line's entries (K.pqn) take a block
-- of that line's numbers, 'b<i>' + 1 .. 'b<i>' + 'n<i>' in K.draw, and the
-- first line's the rest of the pre-queue ('n0'); 'n' counts them all. The
-- caller has the first line's keys bound.
local function freeze()
  if redis.call('HEXISTS', K.draw, 'state') == 1 then return end
  local base = tonumber(redis.call('GET', K.seq)) or 0
  local n = redis.call('ZCARD', K.prequeue)
  local state = 'drawing'
  if n == 0 then state = 'done' end
  local blocks, n0 = {}, n
  local pqn = redis.call('HGETALL', K.pqn)
  for j = 1, #pqn, 2 do
    local i, c = tonumber(pqn[j]), tonumber(pqn[j + 1]) or 0
    if i and LK[i + 1] and c > 0 then
      blocks[#blocks + 1] = {i, c}
      n0 = n0 - c
    end
  end
  redis.call('HSET', K.draw, 'state', state, 'base', I(base), 'n', I(n), 'written', 0)
  redis.call('SET', K.seq, I(base + n0))
  if (tonumber(redis.call('GET', K.head)) or 0) < base then redis.call('SET', K.head, I(base)) end
  redis.call('DEL', K.seen)
  redis.call('SET', K.seenbase, I(base))
  if #blocks == 0 then return end
  redis.call('HSET', K.draw, 'n0', I(n0))
  for _, blk in ipairs(blocks) do
    local lk, i, c = LK[blk[1] + 1], blk[1], blk[2]
    local b = tonumber(redis.call('GET', lk.seq)) or 0
    redis.call('HSET', K.draw, 'b' .. i, I(b), 'n' .. i, I(c))
    redis.call('SET', lk.seq, I(b + c))
    if (tonumber(redis.call('GET', lk.head)) or 0) < b then redis.call('SET', lk.head, I(b)) end
    redis.call('DEL', lk.seen)
    redis.call('SET', lk.seenbase, I(b))
  end
end
-- phaseNow is phase, after freezing the pre-queue when the room is past
-- its opening: a room whose pre-queue is empty is open at once.
local function phaseNow(nowMs, c)
  local ph, sc = phase(nowMs, c)
  if ph == 'drawing' then
    freeze()
    if redis.call('HGET', K.draw, 'state') == 'done' then ph = 'open' end
  end
  return ph, sc
end
-- admitsNone reports a phase in which nobody is admitted: before the
-- pre-queue is drawn, in mode closed, after closing unless the line is
-- still served.
local function admitsNone(ph, sc)
  return ph == 'scheduled' or ph == 'prequeue' or ph == 'drawing' or
    (ph == 'closed' and (sc[5] == 'closed' or not sc[4]))
end
-- CHALLENGE: the join-rate windows, two fixed windows of win ms (powcur,
-- and powprev the one before; powcur's '#w' is its index) read as a
-- sliding one. powRoll moves them on to nowMs and returns how far into its
-- window nowMs is (0 to 1).
local function powRoll(win, nowMs)
  local w = math.floor(nowMs / win)
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
  return (nowMs % win) / win
end
-- powRate adds add to field in the current window and returns its rate a
-- second over the sliding window (a string), the previous window weighted
-- by the part of it still inside.
local function powRate(field, add, frac, win)
  local cur
  if add > 0 then
    cur = redis.call('HINCRBY', K.powcur, field, add)
  else
    cur = tonumber(redis.call('HGET', K.powcur, field)) or 0
  end
  local prev = tonumber(redis.call('HGET', K.powprev, field)) or 0
  return string.format('%.3f', (prev * (1 - frac) + cur) * 1000 / win)
end
-- challengeMode is a room's stored challenge setting, the server's
-- default (def, '' for off) when the room was saved without one.
local function challengeMode(stored, def)
  if not stored or stored == '' then stored = def end
  if not stored or stored == '' then return 'off' end
  return stored
end
