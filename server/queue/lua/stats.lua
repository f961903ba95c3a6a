-- KEYS: seq* head* queue* active counts rate tick soldout draw prequeue away* back* sessions
-- stats.lua: a room's live counters in one round trip. Passes past their
-- expiry that admit.lua has not swept yet count as expired already.
-- Reply: {seq, head, waiting, active, admitted, leaves, abandoned, expired,
--   consumed, forfeited, ewma, tick, soldout, prequeued, away, back,
--   passedOver, returned, sessions, sessionsOpened, sessionsEnded,
--   sessionsIdle, credit, creditTs, bypassed}
-- GATE: sessions past their expiry that admit.lua has not swept yet count
-- as idle already (not as expired passes).
-- DRAW: the drawn block's line numbers are the pre-queue's tickets again,
-- so they are not issued twice; the pre-queue counts until it is frozen.
-- LINES: seq, waiting, away and back add up every line's; head is the
-- first line's.
local nowMs = math.floor(nowUs() / 1000)
local function num(key) return tonumber(redis.call('GET', key)) or 0 end
local function all(cmd, name)
  local n = 0
  for i = 1, #LK do
    if cmd == 'GET' then n = n + num(LK[i][name]) else n = n + redis.call(cmd, LK[i][name]) end
  end
  return n
end
local c = redis.call('HMGET', K.counts, 'admitted', 'leaves', 'abandoned', 'expired', 'consumed', 'forfeited',
  'sessionsOpened', 'sessionsEnded', 'sessionsIdle')
for i = 1, 9 do c[i] = tonumber(c[i]) or 0 end
local stalePasses, staleSessions = staleMembers(nowMs)
local d = redis.call('HMGET', K.draw, 'state', 'n')
local prequeued = 0
if not d[1] then prequeued = redis.call('ZCARD', K.prequeue) end
return {
  all('GET', 'seq') - (tonumber(d[2]) or 0), num(K.head), all('ZCARD', 'queue'),
  redis.call('ZCOUNT', K.active, '(' .. I(nowMs), '+inf'),
  c[1], c[2], c[3], c[4] + stalePasses, c[5], c[6],
  redis.call('HGET', K.rate, 'ewma') or '', num(K.tick), redis.call('EXISTS', K.soldout), prequeued,
  -- ABSENCE
  all('ZCARD', 'away'), all('ZCARD', 'back'),
  tonumber(redis.call('HGET', K.counts, 'passedOver')) or 0, tonumber(redis.call('HGET', K.counts, 'returned')) or 0,
  -- GATE
  redis.call('HLEN', K.sessions) - staleSessions, c[7], c[8], c[9] + staleSessions,
  -- the admission credit carried past the last tick, and that tick's time
  redis.call('HGET', K.rate, 'credit') or '', redis.call('HGET', K.rate, 'ts') or '',
  -- BYPASS: passes let in outside the line
  tonumber(redis.call('HGET', K.counts, 'bypassed')) or 0,
}
