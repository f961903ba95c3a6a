-- KEYS: cfg active sessions counts rate
-- touch_session.lua (GATE): reports a live session and, with ARGV[3] ==
-- "1" in a room whose sessions are idle ones, pushes its expiry to now +
-- sessionSeconds (never back). A session past its expiry ends here as
-- idle, as admit.lua's sweep would end it. With ARGV[4], a pass id, it
-- reports the session only if that pass opened it (a redeem's retry).
-- ARGV: 2 session id, 3 renew ("1" or "0"), 4 pass id (optional)
-- Reply: {1, startedMs, expiresMs, seconds, mode, subject} or {0} gone
--   (or opened by another pass)
local id = ARGV[2]
local se = getSession(id)
if not se then return {0} end
if ARGV[4] and se.j ~= ARGV[4] then return {0} end
local nowMs = math.floor(nowUs() / 1000)
local x = tonumber(redis.call('ZSCORE', K.active, SESSION .. id))
if not x or x <= nowMs then
  dropSession(id, x or nowMs, 'sessionsIdle')
  return {0}
end
local secs, mode = sessionConf()
if ARGV[3] == '1' and mode == 'idle' and nowMs + secs * 1000 > x then
  x = nowMs + secs * 1000
  redis.call('ZADD', K.active, 'XX', I(x), SESSION .. id)
end
return {1, se.s, x, secs, mode, se.sub}
