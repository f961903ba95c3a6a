-- KEYS: cfg tokens active done counts jtiof sessions
-- open_session.lua (GATE): the pass's redeem, by the claim's holder only
-- (Engine.Redeem claims it first, as the order path does). The pass
-- becomes a tombstone, as after an order, and its slot passes to a new
-- session: the member SESSION..id of the active set, scored with the
-- session's expiry. A pass id that is no longer the pass's (minted again
-- meanwhile) opens nothing and undoes the claim. The session records the
-- pass id, so that a retry of this redeem with the same session id finds
-- it (Engine.Redeem, through touch_session.lua).
-- ARGV: 2 visitor, 3 holder, 4 pass id, 5 session id, 6 subject
-- A redeem that stalled until its pass expired or its claim lapsed opens
-- nothing either (the pass is released; admit.lua sweeps an expired one).
-- Reply: {1, startedMs, expiresMs, seconds, mode}; {0} the pass id is no
--   longer the pass's, the pass expired or the claim lapsed; {-3} not
--   claimed by this holder; {-6} the session id is taken
local v = ARGV[2]
local e = getPass(v)
if not e or e.s ~= 'C' or e.h ~= ARGV[3] then return {-3} end
local nowMs = math.floor(nowUs() / 1000)
local lapsed = e.x <= nowMs or e.c <= nowMs
local stale = lapsed or redis.call('HGET', K.jtiof, v) ~= ARGV[4]
local taken = not stale and redis.call('HEXISTS', K.sessions, ARGV[5]) == 1
if stale or taken then
  e.s, e.c, e.h = 'R', 0, '-'
  putPass(v, e)
  if taken then return {-6} end
  return {0}
end
local ttl = tonumber(redis.call('HGET', K.cfg, 'tokenTTLSeconds')) or 300
local secs, mode = sessionConf()
local held = math.min(nowMs, math.max(0, e.x - ttl * 1000)) -- when the pass took its slot
local x = nowMs + secs * 1000
e.s, e.c, e.h, e.x = 'U', 0, '-', nowMs + ttl * 1000
putPass(v, e)
redis.call('ZREM', K.active, v)
redis.call('ZADD', K.done, I(e.x), v)
redis.call('ZADD', K.active, I(x), SESSION .. ARGV[5])
redis.call('HSET', K.sessions, ARGV[5], I(nowMs) .. ' ' .. I(held) .. ' ' .. ARGV[6] .. ' ' .. ARGV[4])
redis.call('HINCRBY', K.counts, 'sessionsOpened', 1)
return {1, nowMs, x, secs, mode}
