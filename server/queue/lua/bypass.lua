-- KEYS: cfg rate tokens active done counts bypass jtis jtiof queue* departed* departing* prequeue withdrawn draw away* awaytk* back* campof pqline pqn
-- bypass.lua: lets a visitor into the room at once, outside the line: a
-- pass of their own, held in a slot as every pass is, and never taken
-- from the line, the rate's credit or the admitted count. With a test
-- link it takes one of the link's uses, atomically with the pass. A
-- visitor who waits in the line (or the pre-queue, or passed over while
-- away) leaves it in the same call, counted as a leave. A room whose sale
-- has ended lets nobody new in (a live pass is kept); a scheduled,
-- pre-queued, drawing or paused room does, so that staff can test it
-- before and during the sale.
-- ARGV: 2 visitor, 3 token, 4 the test link's id ('' for a staff network)
-- Reply: {code, passExpiresMs}: 1 let in; 2 the visitor holds a live pass
--   already (nothing taken); -1 no such room; -2 every slot of maxActive
--   is held; -3 no such link (or revoked); -4 the link has expired; -5 the
--   link is used up; -6 the sale has ended (closed, or past closesAt with
--   the line not served after it)
local cfg = redis.call('HMGET', K.cfg, 'maxActive', 'tokenTTLSeconds', 'lines')
if redis.call('EXISTS', K.cfg) == 0 then return {-1, 0} end
local nowMs = math.floor(nowUs() / 1000)
local v, link = ARGV[2], ARGV[4]
local held = livePass(v, nowMs)
if held then return {2, held.x} end
local ph, sc = phase(nowMs)
if ph == 'closed' and (sc[5] == 'closed' or not sc[4]) then return {-6, 0} end
local cap, used, untilMs
if link ~= '' then
  local raw = redis.call('HGET', K.bypass, link)
  if not raw then return {-3, 0} end
  cap, used, untilMs = string.match(raw, '^(%d+) (%d+) (%d+)$')
  cap, used, untilMs = tonumber(cap), tonumber(used), tonumber(untilMs)
  if not cap then return {-3, 0} end
  if untilMs > 0 and nowMs >= untilMs then return {-4, 0} end
  if used >= cap then return {-5, 0} end
end
local maxActive = tonumber(cfg[1]) or 0
if maxActive > 0 and redis.call('ZCOUNT', K.active, '(' .. I(nowMs), '+inf') >= maxActive then return {-2, 0} end
-- An expired pass of this visitor the sweep has not reached ends here,
-- counted once, as admit.lua's admissions do; a tombstone is replaced.
if redis.call('ZREM', K.active, v) == 1 then redis.call('HINCRBY', K.counts, 'expired', 1) end
redis.call('ZREM', K.done, v)
forgetJtis({v})
local x = nowMs + (tonumber(cfg[2]) or 300) * 1000
putPass(v, {t = ARGV[3], s = 'R', n = 0, x = x, c = 0, h = '-', f = 0, p = 0})
redis.call('ZADD', K.active, I(x), v)
redis.call('HINCRBY', K.counts, 'bypassed', 1)
if cap then redis.call('HSET', K.bypass, link, I(cap) .. ' ' .. I(used + 1) .. ' ' .. I(untilMs)) end
leaveLines(v, math.max(#parseLines(cfg[3]), 1))
wake() -- IDLE: the pass's end is swept by the room's ticks
return {1, x}
