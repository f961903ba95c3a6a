-- KEYS: active sessions counts rate
-- end_session.lua (GATE): ends a session now and frees its slot (one past
-- its expiry counts as idle: it ended then).
-- ARGV: 2 session id
-- Reply: 1 ended, 0 no such session
local id = ARGV[2]
if redis.call('HEXISTS', K.sessions, id) == 0 then return 0 end
local nowMs = math.floor(nowUs() / 1000)
local x = tonumber(redis.call('ZSCORE', K.active, SESSION .. id))
if x and x <= nowMs then
  dropSession(id, x, 'sessionsIdle')
else
  dropSession(id, nowMs, 'sessionsEnded')
end
return 1
